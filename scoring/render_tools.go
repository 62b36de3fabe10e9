package scoring

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbench/bench/internal/escape"
)

// maxToolRows bounds the tools a report lists per server in text; the JSON
// report has every one.
const maxToolRows = 10

// costliest is the tools of d, the most tokens first.
func costliest(d ToolDefinitions) []ToolTokens {
	out := slices.Clone(d.Tools)
	slices.SortStableFunc(out, func(a, b ToolTokens) int { return cmp.Or(cmp.Compare(b.Tokens, a.Tokens), cmp.Compare(a.Name, b.Name)) })
	return out
}

// churnLine says in one line how a server's tool definitions changed.
func churnLine(c ToolChurn, esc func(string) string) string {
	var parts []string
	for _, t := range c.Added {
		parts = append(parts, fmt.Sprintf("added %s (+%d)", esc(t.Name), t.Tokens))
	}
	for _, t := range c.Removed {
		parts = append(parts, fmt.Sprintf("removed %s (-%d)", esc(t.Name), t.Tokens))
	}
	for _, t := range c.Changed {
		parts = append(parts, fmt.Sprintf("changed %s (%d -> %d, %+d)", esc(t.Name), t.Before, t.After, t.After-t.Before))
	}
	if len(parts) > maxToolRows {
		parts = append(parts[:maxToolRows], fmt.Sprintf("%d more in the JSON and Markdown reports", len(parts)-maxToolRows))
	}
	return fmt.Sprintf("%s: %d -> %d tokens (%+d): %s", esc(c.Server), c.Before, c.After, c.Delta(), strings.Join(parts, ", "))
}

const churnNote = "any change to the tool definitions breaks a provider's prompt cache: they open every request"

func writeToolChurnMD(b *strings.Builder, r *Report) {
	if len(r.ToolChurn) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Tool definitions changed since the recording\n\nAny change to them breaks a provider's prompt cache: they open every request.\n\n| server | tool | change | tokens before | tokens after | delta |\n|---|---|---|---|---|---|\n")
	for _, c := range r.ToolChurn {
		for _, t := range c.Added {
			fmt.Fprintf(b, "| %s | %s | added | | %d | %+d |\n", md(c.Server), md(t.Name), t.Tokens, t.Tokens)
		}
		for _, t := range c.Removed {
			fmt.Fprintf(b, "| %s | %s | removed | %d | | %+d |\n", md(c.Server), md(t.Name), t.Tokens, -t.Tokens)
		}
		for _, t := range c.Changed {
			fmt.Fprintf(b, "| %s | %s | changed | %d | %d | %+d |\n", md(c.Server), md(t.Name), t.Before, t.After, t.After-t.Before)
		}
		fmt.Fprintf(b, "| %s | **all** | | %d | %d | %+d |\n", md(c.Server), c.Before, c.After, c.Delta())
	}
}

func writeToolDefsMD(b *strings.Builder, r *Report) {
	for _, d := range r.ToolDefinitions {
		// Raw HTML: Markdown's escapes do not work inside it.
		fmt.Fprintf(b, "\n<details><summary>Tool definitions of %s: %d tokens, %s (%s)</summary>\n\n| tool | tokens |\n|---|---|\n",
			escape.HTML(d.Server), d.Tokens, toolCount(len(d.Tools)), escape.HTML(r.Meta.Tokenizer))
		for _, t := range costliest(d) {
			fmt.Fprintf(b, "| %s | %d |\n", md(t.Name), t.Tokens)
		}
		b.WriteString("\n</details>\n")
	}
}

func writeToolsText(b *strings.Builder, r *Report) {
	for _, c := range r.ToolChurn {
		fmt.Fprintf(b, "  tool definitions changed since the recording: %s (%s)\n", churnLine(c, tl), churnNote)
	}
	for _, d := range r.ToolDefinitions {
		var top []string
		for i, t := range costliest(d) {
			if i == maxToolRows {
				top = append(top, fmt.Sprintf("%d more", len(d.Tools)-maxToolRows))
				break
			}
			top = append(top, fmt.Sprintf("%s %d", tl(t.Name), t.Tokens))
		}
		fmt.Fprintf(b, "  tool definitions of %s: %d tokens, %s: %s\n", tl(d.Server), d.Tokens, toolCount(len(d.Tools)), strings.Join(top, ", "))
	}
}

// toolCount is "1 tool", "17 tools".
func toolCount(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}
