# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'transport_page.ui'
##
##
## WARNING! All changes made in this file will be lost when recompiling UI file!
################################################################################

from PySide6.QtCore import (QCoreApplication, QDate, QDateTime, QLocale,
    QMetaObject, QObject, QPoint, QRect,
    QSize, QTime, QUrl, Qt)
from PySide6.QtGui import (QBrush, QColor, QConicalGradient, QCursor,
    QFont, QFontDatabase, QGradient, QIcon,
    QImage, QKeySequence, QLinearGradient, QPainter,
    QPalette, QPixmap, QRadialGradient, QTransform)
from PySide6.QtWidgets import (QApplication, QCheckBox, QComboBox, QFormLayout,
    QGroupBox, QHBoxLayout, QLabel, QLineEdit,
    QPushButton, QRadioButton, QSizePolicy, QSpacerItem,
    QSpinBox, QVBoxLayout, QWidget, QWizardPage)

class Ui_TransportPage(object):
    def setupUi(self, TransportPage):
        if not TransportPage.objectName():
            TransportPage.setObjectName(u"TransportPage")
        self.page_layout = QVBoxLayout(TransportPage)
        self.page_layout.setSpacing(12)
        self.page_layout.setObjectName(u"page_layout")
        self.transport_group = QGroupBox(TransportPage)
        self.transport_group.setObjectName(u"transport_group")
        self.transport_layout = QVBoxLayout(self.transport_group)
        self.transport_layout.setSpacing(4)
        self.transport_layout.setObjectName(u"transport_layout")
        self.tcp_radio = QRadioButton(self.transport_group)
        self.tcp_radio.setObjectName(u"tcp_radio")

        self.transport_layout.addWidget(self.tcp_radio)

        self.tcp_note = QLabel(self.transport_group)
        self.tcp_note.setObjectName(u"tcp_note")
        self.tcp_note.setWordWrap(True)
        self.tcp_note.setIndent(26)

        self.transport_layout.addWidget(self.tcp_note)

        self.private_radio = QRadioButton(self.transport_group)
        self.private_radio.setObjectName(u"private_radio")

        self.transport_layout.addWidget(self.private_radio)

        self.private_note = QLabel(self.transport_group)
        self.private_note.setObjectName(u"private_note")
        self.private_note.setWordWrap(True)
        self.private_note.setIndent(26)

        self.transport_layout.addWidget(self.private_note)

        self.ssh_radio = QRadioButton(self.transport_group)
        self.ssh_radio.setObjectName(u"ssh_radio")

        self.transport_layout.addWidget(self.ssh_radio)

        self.ssh_note = QLabel(self.transport_group)
        self.ssh_note.setObjectName(u"ssh_note")
        self.ssh_note.setWordWrap(True)
        self.ssh_note.setIndent(26)

        self.transport_layout.addWidget(self.ssh_note)

        self.relay_radio = QRadioButton(self.transport_group)
        self.relay_radio.setObjectName(u"relay_radio")

        self.transport_layout.addWidget(self.relay_radio)

        self.local_radio = QRadioButton(self.transport_group)
        self.local_radio.setObjectName(u"local_radio")

        self.transport_layout.addWidget(self.local_radio)

        self.local_note = QLabel(self.transport_group)
        self.local_note.setObjectName(u"local_note")
        self.local_note.setWordWrap(True)
        self.local_note.setIndent(26)

        self.transport_layout.addWidget(self.local_note)


        self.page_layout.addWidget(self.transport_group)

        self.tuning_group = QGroupBox(TransportPage)
        self.tuning_group.setObjectName(u"tuning_group")
        self.tuning_layout = QFormLayout(self.tuning_group)
        self.tuning_layout.setObjectName(u"tuning_layout")
        self.tuning_layout.setHorizontalSpacing(10)
        self.tuning_layout.setVerticalSpacing(8)
        self.tuning_layout.setLabelAlignment(Qt.AlignmentFlag.AlignRight|Qt.AlignmentFlag.AlignVCenter)
        self.buffer_label = QLabel(self.tuning_group)
        self.buffer_label.setObjectName(u"buffer_label")

        self.tuning_layout.setWidget(0, QFormLayout.ItemRole.LabelRole, self.buffer_label)

        self.buffer_layout = QHBoxLayout()
        self.buffer_layout.setObjectName(u"buffer_layout")
        self.buffer_combo = QComboBox(self.tuning_group)
        self.buffer_combo.setObjectName(u"buffer_combo")
        self.buffer_combo.setEditable(True)
        self.buffer_combo.setMinimumSize(QSize(120, 0))

        self.buffer_layout.addWidget(self.buffer_combo)

        self.buffer_hint = QLabel(self.tuning_group)
        self.buffer_hint.setObjectName(u"buffer_hint")
        self.buffer_hint.setTextFormat(Qt.RichText)
        self.buffer_hint.setWordWrap(True)

        self.buffer_layout.addWidget(self.buffer_hint)

        self.buffer_layout.setStretch(1, 1)

        self.tuning_layout.setLayout(0, QFormLayout.ItemRole.FieldRole, self.buffer_layout)

        self.block_label = QLabel(self.tuning_group)
        self.block_label.setObjectName(u"block_label")

        self.tuning_layout.setWidget(1, QFormLayout.ItemRole.LabelRole, self.block_label)

        self.block_combo = QComboBox(self.tuning_group)
        self.block_combo.addItem("")
        self.block_combo.addItem("")
        self.block_combo.addItem("")
        self.block_combo.setObjectName(u"block_combo")
        self.block_combo.setEditable(True)
        self.block_combo.setMinimumSize(QSize(120, 0))

        self.tuning_layout.setWidget(1, QFormLayout.ItemRole.FieldRole, self.block_combo)

        self.port_label = QLabel(self.tuning_group)
        self.port_label.setObjectName(u"port_label")

        self.tuning_layout.setWidget(2, QFormLayout.ItemRole.LabelRole, self.port_label)

        self.port_spin = QSpinBox(self.tuning_group)
        self.port_spin.setObjectName(u"port_spin")
        self.port_spin.setMaximum(65535)
        self.port_spin.setMinimumSize(QSize(160, 0))

        self.tuning_layout.setWidget(2, QFormLayout.ItemRole.FieldRole, self.port_spin)

        self.connect_label = QLabel(self.tuning_group)
        self.connect_label.setObjectName(u"connect_label")

        self.tuning_layout.setWidget(3, QFormLayout.ItemRole.LabelRole, self.connect_label)

        self.address_layout = QHBoxLayout()
        self.address_layout.setSpacing(12)
        self.address_layout.setObjectName(u"address_layout")
        self.connect_edit = QLineEdit(self.tuning_group)
        self.connect_edit.setObjectName(u"connect_edit")

        self.address_layout.addWidget(self.connect_edit)

        self.allow_label = QLabel(self.tuning_group)
        self.allow_label.setObjectName(u"allow_label")

        self.address_layout.addWidget(self.allow_label)

        self.allow_edit = QLineEdit(self.tuning_group)
        self.allow_edit.setObjectName(u"allow_edit")

        self.address_layout.addWidget(self.allow_edit)

        self.address_layout.setStretch(0, 1)
        self.address_layout.setStretch(2, 1)

        self.tuning_layout.setLayout(3, QFormLayout.ItemRole.FieldRole, self.address_layout)

        self.rate_label = QLabel(self.tuning_group)
        self.rate_label.setObjectName(u"rate_label")

        self.tuning_layout.setWidget(4, QFormLayout.ItemRole.LabelRole, self.rate_label)

        self.rate_edit = QLineEdit(self.tuning_group)
        self.rate_edit.setObjectName(u"rate_edit")

        self.tuning_layout.setWidget(4, QFormLayout.ItemRole.FieldRole, self.rate_edit)

        self.stall_label = QLabel(self.tuning_group)
        self.stall_label.setObjectName(u"stall_label")

        self.tuning_layout.setWidget(5, QFormLayout.ItemRole.LabelRole, self.stall_label)

        self.stall_combo = QComboBox(self.tuning_group)
        self.stall_combo.addItem("")
        self.stall_combo.addItem("")
        self.stall_combo.addItem("")
        self.stall_combo.addItem("")
        self.stall_combo.setObjectName(u"stall_combo")

        self.tuning_layout.setWidget(5, QFormLayout.ItemRole.FieldRole, self.stall_combo)

        self.intermediates_check = QCheckBox(self.tuning_group)
        self.intermediates_check.setObjectName(u"intermediates_check")

        self.tuning_layout.setWidget(6, QFormLayout.ItemRole.SpanningRole, self.intermediates_check)

        self.readonly_check = QCheckBox(self.tuning_group)
        self.readonly_check.setObjectName(u"readonly_check")

        self.tuning_layout.setWidget(7, QFormLayout.ItemRole.SpanningRole, self.readonly_check)

        self.hash_check = QCheckBox(self.tuning_group)
        self.hash_check.setObjectName(u"hash_check")

        self.tuning_layout.setWidget(8, QFormLayout.ItemRole.SpanningRole, self.hash_check)

        self.compress_label = QLabel(self.tuning_group)
        self.compress_label.setObjectName(u"compress_label")

        self.tuning_layout.setWidget(9, QFormLayout.ItemRole.LabelRole, self.compress_label)

        self.compress_layout = QHBoxLayout()
        self.compress_layout.setObjectName(u"compress_layout")
        self.compress_combo = QComboBox(self.tuning_group)
        self.compress_combo.addItem("")
        self.compress_combo.addItem("")
        self.compress_combo.addItem("")
        self.compress_combo.setObjectName(u"compress_combo")
        self.compress_combo.setMinimumSize(QSize(120, 0))

        self.compress_layout.addWidget(self.compress_combo)

        self.compress_hint = QLabel(self.tuning_group)
        self.compress_hint.setObjectName(u"compress_hint")
        self.compress_hint.setTextFormat(Qt.RichText)
        self.compress_hint.setWordWrap(True)

        self.compress_layout.addWidget(self.compress_hint)

        self.compress_layout.setStretch(1, 1)

        self.tuning_layout.setLayout(9, QFormLayout.ItemRole.FieldRole, self.compress_layout)


        self.page_layout.addWidget(self.tuning_group)

        self.doctor_layout = QHBoxLayout()
        self.doctor_layout.setObjectName(u"doctor_layout")
        self.doctor_button = QPushButton(TransportPage)
        self.doctor_button.setObjectName(u"doctor_button")

        self.doctor_layout.addWidget(self.doctor_button)

        self.doctor_hint = QLabel(TransportPage)
        self.doctor_hint.setObjectName(u"doctor_hint")
        self.doctor_hint.setWordWrap(True)

        self.doctor_layout.addWidget(self.doctor_hint)

        self.doctor_layout.setStretch(1, 1)

        self.page_layout.addLayout(self.doctor_layout)

        self.error_label = QLabel(TransportPage)
        self.error_label.setObjectName(u"error_label")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.error_label)

        self.page_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Expanding)

        self.page_layout.addItem(self.page_spacer)

#if QT_CONFIG(shortcut)
        self.buffer_label.setBuddy(self.buffer_combo)
        self.block_label.setBuddy(self.block_combo)
        self.port_label.setBuddy(self.port_spin)
        self.connect_label.setBuddy(self.connect_edit)
        self.allow_label.setBuddy(self.allow_edit)
        self.rate_label.setBuddy(self.rate_edit)
        self.stall_label.setBuddy(self.stall_combo)
        self.compress_label.setBuddy(self.compress_combo)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(TransportPage)

        QMetaObject.connectSlotsByName(TransportPage)
    # setupUi

    def retranslateUi(self, TransportPage):
        TransportPage.setTitle(QCoreApplication.translate("TransportPage", u"Transport and tuning", None))
        TransportPage.setSubTitle(QCoreApplication.translate("TransportPage", u"How the stream travels, and how big the buffers are.", None))
        self.transport_group.setTitle(QCoreApplication.translate("TransportPage", u"Transport", None))
        self.tcp_radio.setText(QCoreApplication.translate("TransportPage", u"&Direct TCP between the two mbuffers (fastest)", None))
#if QT_CONFIG(accessibility)
        self.tcp_radio.setAccessibleName(QCoreApplication.translate("TransportPage", u"Direct TCP", None))
#endif // QT_CONFIG(accessibility)
        self.tcp_note.setText(QCoreApplication.translate("TransportPage", u"Cleartext: the data is not encrypted. Trusted networks only.", None))
#if QT_CONFIG(accessibility)
        self.tcp_note.setAccessibleName(QCoreApplication.translate("TransportPage", u"Cleartext: the data is not encrypted", None))
#endif // QT_CONFIG(accessibility)
        self.private_radio.setText(QCoreApplication.translate("TransportPage", u"Direct TCP, &private (TLS 1.3 with keys made for this job)", None))
#if QT_CONFIG(accessibility)
        self.private_radio.setAccessibleName(QCoreApplication.translate("TransportPage", u"Direct TCP, private", None))
#endif // QT_CONFIG(accessibility)
        self.private_note.setText(QCoreApplication.translate("TransportPage", u"Encrypted and authenticated: each host proves a key made for this job. Needs OpenSSL 3 on both hosts.", None))
#if QT_CONFIG(accessibility)
        self.private_note.setAccessibleName(QCoreApplication.translate("TransportPage", u"Encrypted and authenticated with keys made for this job", None))
#endif // QT_CONFIG(accessibility)
        self.ssh_radio.setText(QCoreApplication.translate("TransportPage", u"Through &SSH from the source to the destination (encrypted, slower)", None))
#if QT_CONFIG(accessibility)
        self.ssh_radio.setAccessibleName(QCoreApplication.translate("TransportPage", u"Through SSH", None))
#endif // QT_CONFIG(accessibility)
        self.ssh_note.setText(QCoreApplication.translate("TransportPage", u"The source host's own ssh must reach the destination without a password.", None))
#if QT_CONFIG(accessibility)
        self.ssh_note.setAccessibleName(QCoreApplication.translate("TransportPage", u"The source host's own ssh must reach the destination without a password", None))
#endif // QT_CONFIG(accessibility)
        self.relay_radio.setText(QCoreApplication.translate("TransportPage", u"Rela&yed through this computer (encrypted; for hosts that cannot reach each other)", None))
#if QT_CONFIG(accessibility)
        self.relay_radio.setAccessibleName(QCoreApplication.translate("TransportPage", u"Relayed through this computer", None))
#endif // QT_CONFIG(accessibility)
        self.local_radio.setText(QCoreApplication.translate("TransportPage", u"Same &host, no network", None))
#if QT_CONFIG(accessibility)
        self.local_radio.setAccessibleName(QCoreApplication.translate("TransportPage", u"Same host", None))
#endif // QT_CONFIG(accessibility)
        self.local_note.setText(QCoreApplication.translate("TransportPage", u"Only when the source and the destination are the same machine.", None))
#if QT_CONFIG(accessibility)
        self.local_note.setAccessibleName(QCoreApplication.translate("TransportPage", u"Only when the source and the destination are the same machine", None))
#endif // QT_CONFIG(accessibility)
        self.tuning_group.setTitle(QCoreApplication.translate("TransportPage", u"Tuning", None))
        self.buffer_label.setText(QCoreApplication.translate("TransportPage", u"&Buffer size:", None))
#if QT_CONFIG(accessibility)
        self.buffer_combo.setAccessibleName(QCoreApplication.translate("TransportPage", u"Buffer size", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.buffer_combo.setAccessibleDescription(QCoreApplication.translate("TransportPage", u"Memory for mbuffer on each end, e.g. 512M", None))
#endif // QT_CONFIG(accessibility)
        self.buffer_hint.setText("")
#if QT_CONFIG(accessibility)
        self.buffer_hint.setAccessibleName(QCoreApplication.translate("TransportPage", u"Buffer suggestion", None))
#endif // QT_CONFIG(accessibility)
        self.block_label.setText(QCoreApplication.translate("TransportPage", u"B&lock size:", None))
        self.block_combo.setItemText(0, QCoreApplication.translate("TransportPage", u"128k", None))
        self.block_combo.setItemText(1, QCoreApplication.translate("TransportPage", u"256k", None))
        self.block_combo.setItemText(2, QCoreApplication.translate("TransportPage", u"1M", None))

#if QT_CONFIG(accessibility)
        self.block_combo.setAccessibleName(QCoreApplication.translate("TransportPage", u"Block size", None))
#endif // QT_CONFIG(accessibility)
        self.port_label.setText(QCoreApplication.translate("TransportPage", u"&TCP port:", None))
        self.port_spin.setSpecialValueText(QCoreApplication.translate("TransportPage", u"auto (a free port)", None))
#if QT_CONFIG(accessibility)
        self.port_spin.setAccessibleName(QCoreApplication.translate("TransportPage", u"TCP port", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.port_spin.setAccessibleDescription(QCoreApplication.translate("TransportPage", u"0 picks a free port on the destination", None))
#endif // QT_CONFIG(accessibility)
        self.connect_label.setText(QCoreApplication.translate("TransportPage", u"Destination &address:", None))
        self.connect_edit.setPlaceholderText(QCoreApplication.translate("TransportPage", u"auto (where its ssh answers)", None))
#if QT_CONFIG(tooltip)
        self.connect_edit.setToolTip(QCoreApplication.translate("TransportPage", u"The address the source connects to, where the destination's ssh address is not the one the source reaches it by (NAT, a second network)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.connect_edit.setAccessibleName(QCoreApplication.translate("TransportPage", u"Destination address", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.connect_edit.setAccessibleDescription(QCoreApplication.translate("TransportPage", u"The address the source connects to; empty: the one the destination's ssh answers on", None))
#endif // QT_CONFIG(accessibility)
        self.allow_label.setText(QCoreApplication.translate("TransportPage", u"Accept &only from:", None))
        self.allow_edit.setPlaceholderText(QCoreApplication.translate("TransportPage", u"auto (the source's, by its route)", None))
#if QT_CONFIG(tooltip)
        self.allow_edit.setToolTip(QCoreApplication.translate("TransportPage", u"Direct TCP's listener takes a connection from this address only: the source's address as the destination sees it", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.allow_edit.setAccessibleName(QCoreApplication.translate("TransportPage", u"Accept only from", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.allow_edit.setAccessibleDescription(QCoreApplication.translate("TransportPage", u"The only address Direct TCP's listener accepts; empty: the source's, as its route says", None))
#endif // QT_CONFIG(accessibility)
        self.rate_label.setText(QCoreApplication.translate("TransportPage", u"&Rate limit:", None))
        self.rate_edit.setPlaceholderText(QCoreApplication.translate("TransportPage", u"none, or e.g. 50M per second", None))
#if QT_CONFIG(accessibility)
        self.rate_edit.setAccessibleName(QCoreApplication.translate("TransportPage", u"Rate limit", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.rate_edit.setAccessibleDescription(QCoreApplication.translate("TransportPage", u"Bytes per second, e.g. 50M; empty for none", None))
#endif // QT_CONFIG(accessibility)
        self.stall_label.setText(QCoreApplication.translate("TransportPage", u"If the transfer &stalls:", None))
        self.stall_combo.setItemText(0, QCoreApplication.translate("TransportPage", u"Keep waiting", None))
        self.stall_combo.setItemText(1, QCoreApplication.translate("TransportPage", u"Give up after 1 minute", None))
        self.stall_combo.setItemText(2, QCoreApplication.translate("TransportPage", u"Give up after 5 minutes", None))
        self.stall_combo.setItemText(3, QCoreApplication.translate("TransportPage", u"Give up after 15 minutes", None))

#if QT_CONFIG(tooltip)
        self.stall_combo.setToolTip(QCoreApplication.translate("TransportPage", u"When no byte has moved for 30 s the transfer page says where the stream stopped. Keep waiting: it goes on by itself when bytes move again. Give up: the transfer ends as a failure after that long without a byte (a resumable destination keeps what arrived).", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.stall_combo.setAccessibleName(QCoreApplication.translate("TransportPage", u"If the transfer stalls", None))
#endif // QT_CONFIG(accessibility)
        self.intermediates_check.setText(QCoreApplication.translate("TransportPage", u"Send &intermediate snapshots of an incremental", None))
#if QT_CONFIG(accessibility)
        self.intermediates_check.setAccessibleName(QCoreApplication.translate("TransportPage", u"Send intermediate snapshots", None))
#endif // QT_CONFIG(accessibility)
        self.readonly_check.setText(QCoreApplication.translate("TransportPage", u"Make the copy read-&only afterwards", None))
#if QT_CONFIG(accessibility)
        self.readonly_check.setAccessibleName(QCoreApplication.translate("TransportPage", u"Read-only afterwards", None))
#endif // QT_CONFIG(accessibility)
        self.hash_check.setText(QCoreApplication.translate("TransportPage", u"Also compare the stream's &MD5 on both ends", None))
#if QT_CONFIG(tooltip)
        self.hash_check.setToolTip(QCoreApplication.translate("TransportPage", u"zfs receive already checks the stream's own checksums and zmigrate compares the snapshot guids. The MD5 adds an independent end-to-end check at about 1.7 s of CPU per GiB on each host.", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.hash_check.setAccessibleName(QCoreApplication.translate("TransportPage", u"Compare stream MD5", None))
#endif // QT_CONFIG(accessibility)
        self.compress_label.setText(QCoreApplication.translate("TransportPage", u"Compression in transit (&z):", None))
        self.compress_combo.setItemText(0, QCoreApplication.translate("TransportPage", u"none", None))
        self.compress_combo.setItemText(1, QCoreApplication.translate("TransportPage", u"zstd", None))
        self.compress_combo.setItemText(2, QCoreApplication.translate("TransportPage", u"lz4", None))

#if QT_CONFIG(accessibility)
        self.compress_combo.setAccessibleName(QCoreApplication.translate("TransportPage", u"Compression in transit", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.compress_combo.setAccessibleDescription(QCoreApplication.translate("TransportPage", u"none, zstd or lz4: compress the stream on the source, decompress before zfs receive", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.compress_combo.setToolTip(QCoreApplication.translate("TransportPage", u"Compresses the stream on the source and decompresses it before zfs receive. It pays on links slower than the source's compressor, with data stored uncompressed; on a fast LAN it costs CPU for nothing. The Doctor measures both. Both hosts need the tool.", None))
#endif // QT_CONFIG(tooltip)
        self.compress_hint.setText("")
#if QT_CONFIG(accessibility)
        self.compress_hint.setAccessibleName(QCoreApplication.translate("TransportPage", u"Compression suggestion", None))
#endif // QT_CONFIG(accessibility)
        self.doctor_button.setText(QCoreApplication.translate("TransportPage", u"Do&ctor\u2026", None))
#if QT_CONFIG(accessibility)
        self.doctor_button.setAccessibleName(QCoreApplication.translate("TransportPage", u"Run the doctor", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.doctor_button.setToolTip(QCoreApplication.translate("TransportPage", u"Measure each stage between the two hosts alone and name the slowest", None))
#endif // QT_CONFIG(tooltip)
        self.doctor_hint.setText(QCoreApplication.translate("TransportPage", u"Not sure which transport or buffer? The doctor times disk read, the network (in the clear and inside TLS), ssh and (optionally) disk write for a few seconds each, and says what the private transport costs between your hosts.", None))
        self.error_label.setText("")
#if QT_CONFIG(accessibility)
        self.error_label.setAccessibleName(QCoreApplication.translate("TransportPage", u"Tuning problems", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

