"""The Destination page's reads of the destination, each once, off the GUI thread: interrupted
receives (`partial`) and what an existing dataset holds (`emptiness`)."""
