"""The wizard's side of jobs a runner owns (engine/runner): following a job's record
(record_job), starting the Transfer page's job in a runner (start), and the first page's list
of running and unwatched jobs (panel). The modules are imported by name (no re-exports: the
bridge imports record_job, start imports the bridge)."""
