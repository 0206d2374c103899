"""A tree's run: `job.TreeJob` copies it dataset by dataset (`dataset_job`, in the order
`schedule` gives), takes a catch-up's snapshot ahead (`ahead`), places the copy as it arrives
(`arrival`), says each dataset's state (`states`), checks the whole copy after (`verification`),
and adds it up (`summary`, with where its time went: `phases`)."""
