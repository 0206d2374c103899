# Resource object code (Python 3)
# Created by: object code
# WARNING! All changes made in this file will be lost!

from PySide6 import QtCore

qt_resource_data = b"\
\x00\x00\x04\x1e\
<\
?xml version=\x221.\
0\x22 encoding=\x22UTF\
-8\x22?>\x0a<!-- zmigr\
ate application \
icon: a dataset \
moving from one \
pool (blue) to a\
nother (amber). \
-->\x0a<svg xmlns=\x22\
http://www.w3.or\
g/2000/svg\x22 widt\
h=\x22128\x22 height=\x22\
128\x22 viewBox=\x220 \
0 128 128\x22>\x0a  <t\
itle>zmigrate</t\
itle>\x0a  <rect x=\
\x224\x22 y=\x224\x22 width=\
\x22120\x22 height=\x2212\
0\x22 rx=\x2226\x22 ry=\x222\
6\x22 fill=\x22#1d3f63\
\x22/>\x0a  <!-- sourc\
e pool -->\x0a  <pa\
th d=\x22M12 62 v36\
 a20 8 0 0 0 40 \
0 v-36 z\x22 fill=\x22\
#4f94d9\x22/>\x0a  <pa\
th d=\x22M12 80 a20\
 8 0 0 0 40 0\x22 f\
ill=\x22none\x22 strok\
e=\x22#1d3f63\x22 stro\
ke-width=\x224\x22/>\x0a \
 <ellipse cx=\x2232\
\x22 cy=\x2262\x22 rx=\x2220\
\x22 ry=\x228\x22 fill=\x22#\
a9d0f7\x22/>\x0a  <!--\
 destination poo\
l -->\x0a  <path d=\
\x22M76 62 v36 a20 \
8 0 0 0 40 0 v-3\
6 z\x22 fill=\x22#e9a2\
3b\x22/>\x0a  <path d=\
\x22M76 80 a20 8 0 \
0 0 40 0\x22 fill=\x22\
none\x22 stroke=\x22#1\
d3f63\x22 stroke-wi\
dth=\x224\x22/>\x0a  <ell\
ipse cx=\x2296\x22 cy=\
\x2262\x22 rx=\x2220\x22 ry=\
\x228\x22 fill=\x22#f7d48\
e\x22/>\x0a  <!-- the \
move -->\x0a  <path\
 d=\x22M32 46 C34 2\
4 70 18 86 34\x22 f\
ill=\x22none\x22 strok\
e=\x22#ffffff\x22 stro\
ke-width=\x2212\x22\x0a  \
      stroke-lin\
ecap=\x22round\x22/>\x0a \
 <path d=\x22M99 48\
 L101 20 L73 27 \
z\x22 fill=\x22#ffffff\
\x22 stroke=\x22#fffff\
f\x22 stroke-width=\
\x224\x22\x0a        stro\
ke-linejoin=\x22rou\
nd\x22/>\x0a</svg>\x0a\
"

qt_resource_name = b"\
\x00\x08\
\x03\xfe\x98\x85\
\x00z\
\x00m\x00i\x00g\x00r\x00a\x00t\x00e\
\x00\x1f\
\x00\xc8\x82\xc7\
\x00i\
\x00o\x00.\x00g\x00i\x00t\x00h\x00u\x00b\x00.\x00z\x00m\x00i\x00g\x00r\x00a\x00t\
\x00e\x00.\x00Z\x00m\x00i\x00g\x00r\x00a\x00t\x00e\x00.\x00s\x00v\x00g\
"

qt_resource_struct = b"\
\x00\x00\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x01\
\x00\x00\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x02\
\x00\x00\x00\x16\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\
"

def qInitResources():
    QtCore.qRegisterResourceData(0x01, qt_resource_struct, qt_resource_name, qt_resource_data)

def qCleanupResources():
    QtCore.qUnregisterResourceData(0x01, qt_resource_struct, qt_resource_name, qt_resource_data)

qInitResources()
