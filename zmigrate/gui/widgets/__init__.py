"""Widgets the pages share: a host's panel (`host_panel`) and the filtered dataset tree loaded
off the GUI thread (`dataset_tree`)."""
