"""What the destination already holds that a copy could replace or hide, read before anything
runs: an existing dataset's content (`emptiness`: empty from evidence, or what it holds) and the
paths a copy would mount on (`mounts`: another dataset's mountpoint, a folder holding files),
and whether a copy fits there (`room`)."""

from .emptiness import Emptiness as Emptiness
from .emptiness import Evidence as Evidence
from .emptiness import Listing as Listing
from .emptiness import judge as judge
from .emptiness import read_listing as read_listing
from .emptiness import refusal as refusal
from .emptiness import unread as unread
