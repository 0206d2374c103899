"""A tree's plan, decided from the two inventories before anything changes: which datasets
(`plan.pick`) and what each gets (`plan.plan_tree`, one `entry.TreeEntry` each), which travel
together in one stream (`streams`), which a catch-up leaves as they are (`unchanged`), whether
the first copy fits (`room`), and each dataset's commands as the dry run lists them
(`listing`)."""
