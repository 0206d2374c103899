"""The cut-over's controls: Go live and Go back (`buttons`, shared by the Done and Hosts pages)
and the Hosts page's offer after a restart (`offer`)."""
