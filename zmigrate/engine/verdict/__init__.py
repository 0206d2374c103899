"""Why a transfer is slow, live: `diagnosis` reads both mbuffers' fill and rates into a verdict
(the bottleneck, a finding, advice), `stall` says when no byte moves and where it stopped."""
