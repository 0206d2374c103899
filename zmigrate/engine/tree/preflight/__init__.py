"""A tree's preparation before anything runs: both trees read, then decided on
(`preparation`), the delegations a login without root needs (`grants`), and where each new
dataset would mount (`placement`)."""
