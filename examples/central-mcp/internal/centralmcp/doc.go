// Package centralmcp is a small, real MCP server for HPE Aruba Networking
// Central, built on the official Go SDK. It exists to be measured by bench:
// it is the server under test in bench's own tests and demo, and its
// regressions can be switched on one at a time.
//
// # Vocabulary
//
//   - Tool: one MCP tool; each calls one or a few documented Central
//     endpoints (see the table in the README).
//   - Write gate: tools that change Central refuse unless Options.Writes is
//     set (CENTRAL_WRITES=1 in the binary). Destructive tools also ask the
//     user to confirm through MCP elicitation and do nothing when the answer
//     is not an explicit yes, or when the client cannot be asked.
//   - Paging: list tools return one page of at most limit items and a next
//     cursor; they follow pages to the end only when called with all=true,
//     then with the endpoint's largest page size.
//   - Injection: a named, known regression (see Injections), switched on by
//     --inject NAME. With none, the server is the baseline.
//
// The package never reads the environment or flags: main does, and passes
// Options.
package centralmcp
