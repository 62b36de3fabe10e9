// Package scenarios defines bench's scenario manifests: the questions a
// benchmark run asks an agent, and what a correct answer looks like.
//
// Vocabulary:
//
//   - A scenario is one YAML document: an intent given to the agent, the
//     fixture bundle of the fake Central it runs against, the tools a correct
//     solution uses on each compared server (expected_tools; a server left out
//     or given an empty list is absent; calls_no_tool covers every server with
//     no tool), the parameters those tools should receive (expected_params,
//     matched tolerantly), and the ground truth on the Central side
//     (expect.api_calls, allowed_reads, must_not_call, diagnostic).
//   - A document with format: 1 is in bench's format; one with no format key
//     in the methodology's (Scenario.Methodology): its fields only, the rest
//     defaults, and no result schema, so task success is the API calls alone.
//   - A suite is an intent family (client-diagnosis, ..., incident-response)
//     or the adversarial suite. A category says what kind of case a scenario
//     is: core, edge, safety, negative or multi-step.
//   - An endpoint pattern is "METHOD /path". In expect.api_calls the path is a
//     template ({serial} matches one segment); in allowed_reads, must_not_call
//     and diagnostic it is a glob (* within one segment, ** across segments,
//     and a last * anything under the prefix).
//   - A stage (bench.yaml) selects scenarios by suite, category and tag:
//     smoke, core, safety.
//   - A Catalog is what validation needs to know about the fake Central:
//     fixtures, entities, served routes and their classes. The scenarios
//     package defines it and never imports the fake.
//
// The loader is strict: unknown fields, wrong types, duplicate keys and
// unsupported format versions are errors, each naming file, line, column and
// field path, and every error is reported, not only the first. Lint adds
// warnings for what loads but is looser than it should be (evidence pins).
//
// The matching rules (MatchValue, Scenario.MatchCall) are pure functions over
// decoded JSON values, shared with scoring.
package scenarios
