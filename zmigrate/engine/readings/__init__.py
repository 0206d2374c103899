"""What the mbuffers' status lines become: parsed (`mbuffer`, with its command line), smoothed
into the rate and ETA people read (`rate`), kept at bounded size for plots (`samples`); and what
the CPU gives the way's own ends on their hosts (`end_cpu`)."""
