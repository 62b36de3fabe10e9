// Command bench benchmarks MCP servers for HPE Aruba Networking Central:
// it records agent runs against a deterministic fake Central, replays them
// offline in CI, scores them and gates pull requests.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
