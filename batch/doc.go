// Package batch executes batches of runs: the runs of a recording
// ([Record]) and the replays of recorded runs ([Replay]). It is where bench
// decides what runs when; how one run executes is package recorder's, how
// a recorded turn is served again package replayer's.
//
// # Vocabulary
//
//   - An item is one run to execute. A batch's items have an order (the
//     scenarios in their suite order, each run index in turn; or recorded
//     refs by name), and results are delivered in it.
//   - A worker executes items one after the other; [Options].Parallel
//     workers run at once.
//   - A server group is a set of items whose runs share one server under
//     ReuseServer: one profile, one fixture, one write gate
//     (recorder.ServerGroup). A replay gives each group to one worker, which
//     replays it in item order, so every run meets the server in the state
//     it would meet it in with one worker, and a replay's results do not
//     depend on Parallel. A recording with ReuseServer and one worker does
//     the same: a server meets its group's runs one after the other, as in
//     their replay (in the same order while a scenario has at most ten
//     runs; a replay's items are refs by name, and run index 10 sorts
//     before 2). Any other recording hands its items to whichever worker
//     is free (a live model's turns take as long as they take) and lets
//     the recorder pool its servers.
//   - Prestart: while a worker executes an item, the server its next item
//     needs starts in the background (recorder.Recorder.Prestart), so a
//     server's start-up overlaps the run before.
//   - Read-ahead: a replay reads the next three recorded runs of a worker
//     from the store while the current one replays.
//   - Prepare: while a worker executes an item, what its next item's run
//     needs of its scenario (its hash, its compiled result schema) is
//     worked out in the background (recorder.Recorder.Prepare).
//   - Finishing is what follows a run: storing it (without waiting for the
//     disk: a replay syncs once at the end, a recording in groups, below)
//     and, in a replay, scoring it. It happens beside the worker's next
//     run, at most two runs per worker at once.
//   - Delivery: each item's result reaches the caller's Progress function in
//     item order, from one goroutine, whatever order the workers finish in.
//     A recording says a run only once it is durable: one sync at a time
//     makes every run written before it durable, then the runs it covered
//     are said (syncedReports), so quick runs wait for the disk once per
//     group, never on their own path, and a recording killed at any point
//     has stored every run it said.
//     Only what the reports need of a run (its manifest, metrics and
//     misses) is kept; the run itself is dropped once finished, so memory
//     does not grow with the batch.
//
// Before a replay stores anything, every recorded run's record is read
// (traces.Store.CheckRunRecords), so that damage is said once, by name,
// and nothing is written to a damaged store; the check runs beside the
// first runs, and the first replay to be stored waits for it.
//
// Cancelling the context stops the batch: runs in flight are abandoned and
// not stored (a rerun of the recording resumes where it stopped), reads in
// flight are let finish, and the error says it was interrupted.
package batch
