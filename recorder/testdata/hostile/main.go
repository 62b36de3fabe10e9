// Command hostile is an MCP server over stdio that misbehaves on command,
// for the recorder's tests. HOSTILE_MODE picks the misbehaviour:
//
//	ok            behave
//	exit-at-start exit before reading anything
//	mute          read everything, answer nothing (not even initialize)
//	crash         exit in the middle of a tools/call
//	hang          never answer a tools/call
//	garbage       write a line that is not JSON-RPC instead of the answer
//	big           answer a tools/call with a 10 MB result
//	flood         send 20,000 notifications before the answer
//	ignore-stdin  keep running after stdin closes, ignore SIGTERM, and
//	              start a grandchild that does the same
//	log-time      behave, and log the wall-clock time to stderr at start
//	              and on every call, as many Python servers do
//	hang-on-fake  in a tools/call, start a POST to HOSTILE_CALL_URL and
//	              never finish sending its body
//
// HOSTILE_BOOT_URL, when set, is fetched once at start, before anything
// is read (a boot call); HOSTILE_CALL_URL in every tools/call. Every process it starts appends its pid to
// HOSTILE_PIDFILE. HOSTILE_ECHO,
// when set, is written to stderr and returned in every result (the
// redaction test's fake API key).
// HOSTILE_DUMP_ENV=1 makes it write its whole environment to stderr at
// start and return it in every result, as a server that logs its
// settings does, with the contents of the file HOSTILE_DOTENV names (a
// .env file it loads). HOSTILE_ENV_FILE, when set, is a file it writes
// its environment to, one variable a line (the environment tests).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	mode := os.Getenv("HOSTILE_MODE")
	if f := os.Getenv("HOSTILE_PIDFILE"); f != "" {
		pf, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(pf, os.Getpid())
			pf.Close()
		}
	}
	if u := os.Getenv("HOSTILE_BOOT_URL"); u != "" {
		if resp, err := http.Get(u); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	echo := os.Getenv("HOSTILE_ECHO")
	if echo != "" {
		fmt.Fprintln(os.Stderr, "hostile: my key is", echo)
	}
	if f := os.Getenv("HOSTILE_ENV_FILE"); f != "" {
		os.WriteFile(f, []byte(strings.Join(os.Environ(), "\n")+"\n"), 0o644)
	}
	dumpEnv := os.Getenv("HOSTILE_DUMP_ENV") == "1"
	var dotenv string
	if f := os.Getenv("HOSTILE_DOTENV"); f != "" {
		b, _ := os.ReadFile(f)
		dotenv = string(b)
	}
	if dumpEnv {
		fmt.Fprintln(os.Stderr, "hostile: environment:", strings.Join(os.Environ(), " "))
		fmt.Fprintln(os.Stderr, "hostile: loaded .env:", dotenv)
	}
	if mode == "log-time" {
		fmt.Fprintln(os.Stderr, time.Now().Format(time.RFC3339Nano), "INFO hostile: started")
	}
	switch mode {
	case "exit-at-start":
		fmt.Fprintln(os.Stderr, "hostile: exiting at start")
		os.Exit(7)
	case "grandchild":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		block()
	case "ignore-stdin":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		self, _ := os.Executable()
		gc := exec.Command(self)
		gc.Env = append(os.Environ(), "HOSTILE_MODE=grandchild")
		gc.Start()
	}
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			if mode == "ignore-stdin" {
				block()
			}
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
			continue // notifications and responses
		}
		if mode == "mute" {
			continue
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result}) }
		switch msg.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(msg.Params, &p)
			reply(map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "hostile", "version": "1"}})
		case "tools/list":
			reply(map[string]any{"tools": []any{map[string]any{
				"name": "get_status", "description": "Get the status of the network.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			}}})
		case "tools/call":
			if mode == "hang-on-fake" {
				hangOnFake(os.Getenv("HOSTILE_CALL_URL"))
			}
			if u := os.Getenv("HOSTILE_CALL_URL"); u != "" {
				if resp, err := http.Get(u); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			text := `{"status":"ok"}`
			if echo != "" {
				text = `{"status":"ok","key":"` + echo + `"}`
			}
			if dumpEnv {
				b, _ := json.Marshal(map[string]any{"status": "ok", "environ": os.Environ(), "dotenv": dotenv})
				text = string(b)
			}
			switch mode {
			case "log-time":
				fmt.Fprintln(os.Stderr, time.Now().Format(time.RFC3339Nano), "INFO hostile: tools/call")
			case "crash":
				fmt.Fprintln(os.Stderr, "hostile: crashing mid-call")
				os.Exit(3)
			case "hang":
				block()
			case "hang-partial":
				// A notification, then the start of the answer, then nothing.
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "working"}})
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"half`, msg.ID)
				out.Flush()
				block()
			case "garbage":
				out.WriteString("this is not JSON-RPC\n")
				out.Flush()
				continue
			case "big":
				text = strings.Repeat("x", 10<<20)
			case "flood":
				for i := 0; i < 20000; i++ {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
						"params": map[string]any{"level": "info", "data": i}})
				}
			}
			reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
		default:
			reply(map[string]any{})
		}
	}
}

// block never returns. (An empty select would: the runtime kills a
// program whose goroutines are all blocked.)
func block() {
	for {
		time.Sleep(time.Hour)
	}
}

// hangOnFake sends the headers of a POST to u and part of its body, then
// blocks: the fake Central waits for the rest.
func hangOnFake(u string) {
	pu, err := url.Parse(u)
	if err != nil {
		block()
	}
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		block()
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":", pu.Path, pu.Host)
	block()
}
