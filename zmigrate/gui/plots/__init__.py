"""Live plots of a transfer (pyqtgraph): rates, buffer fill, and the timer that refreshes them."""
