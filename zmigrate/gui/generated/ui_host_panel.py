# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'host_panel.ui'
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
    QFrame, QHBoxLayout, QLabel, QLineEdit,
    QProgressBar, QPushButton, QSizePolicy, QSpacerItem,
    QSpinBox, QToolButton, QVBoxLayout, QWidget)

class Ui_HostPanel(object):
    def setupUi(self, HostPanel):
        if not HostPanel.objectName():
            HostPanel.setObjectName(u"HostPanel")
        self.panel_layout = QVBoxLayout(HostPanel)
        self.panel_layout.setSpacing(10)
        self.panel_layout.setObjectName(u"panel_layout")
        self.panel_layout.setContentsMargins(0, 0, 0, 0)
        self.form_layout = QFormLayout()
        self.form_layout.setObjectName(u"form_layout")
        self.form_layout.setLabelAlignment(Qt.AlignmentFlag.AlignRight|Qt.AlignmentFlag.AlignVCenter)
        self.form_layout.setHorizontalSpacing(10)
        self.form_layout.setVerticalSpacing(8)
        self.host_label = QLabel(HostPanel)
        self.host_label.setObjectName(u"host_label")

        self.form_layout.setWidget(0, QFormLayout.ItemRole.LabelRole, self.host_label)

        self.host_combo = QComboBox(HostPanel)
        self.host_combo.setObjectName(u"host_combo")
        self.host_combo.setEditable(True)
        self.host_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        sizePolicy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        sizePolicy.setHorizontalStretch(0)
        sizePolicy.setVerticalStretch(0)
        sizePolicy.setHeightForWidth(self.host_combo.sizePolicy().hasHeightForWidth())
        self.host_combo.setSizePolicy(sizePolicy)

        self.form_layout.setWidget(0, QFormLayout.ItemRole.FieldRole, self.host_combo)

        self.user_label = QLabel(HostPanel)
        self.user_label.setObjectName(u"user_label")

        self.form_layout.setWidget(1, QFormLayout.ItemRole.LabelRole, self.user_label)

        self.user_edit = QLineEdit(HostPanel)
        self.user_edit.setObjectName(u"user_edit")

        self.form_layout.setWidget(1, QFormLayout.ItemRole.FieldRole, self.user_edit)

        self.port_label = QLabel(HostPanel)
        self.port_label.setObjectName(u"port_label")

        self.form_layout.setWidget(2, QFormLayout.ItemRole.LabelRole, self.port_label)

        self.port_spin = QSpinBox(HostPanel)
        self.port_spin.setObjectName(u"port_spin")
        self.port_spin.setMaximum(65535)
        self.port_spin.setMinimumSize(QSize(140, 0))

        self.form_layout.setWidget(2, QFormLayout.ItemRole.FieldRole, self.port_spin)

        self.auth_label = QLabel(HostPanel)
        self.auth_label.setObjectName(u"auth_label")

        self.form_layout.setWidget(3, QFormLayout.ItemRole.LabelRole, self.auth_label)

        self.auth_combo = QComboBox(HostPanel)
        self.auth_combo.addItem("")
        self.auth_combo.addItem("")
        self.auth_combo.addItem("")
        self.auth_combo.setObjectName(u"auth_combo")

        self.form_layout.setWidget(3, QFormLayout.ItemRole.FieldRole, self.auth_combo)

        self.key_label = QLabel(HostPanel)
        self.key_label.setObjectName(u"key_label")

        self.form_layout.setWidget(4, QFormLayout.ItemRole.LabelRole, self.key_label)

        self.key_layout = QHBoxLayout()
        self.key_layout.setObjectName(u"key_layout")
        self.key_edit = QLineEdit(HostPanel)
        self.key_edit.setObjectName(u"key_edit")

        self.key_layout.addWidget(self.key_edit)

        self.key_browse_button = QToolButton(HostPanel)
        self.key_browse_button.setObjectName(u"key_browse_button")

        self.key_layout.addWidget(self.key_browse_button)


        self.form_layout.setLayout(4, QFormLayout.ItemRole.FieldRole, self.key_layout)

        self.password_label = QLabel(HostPanel)
        self.password_label.setObjectName(u"password_label")

        self.form_layout.setWidget(5, QFormLayout.ItemRole.LabelRole, self.password_label)

        self.password_edit = QLineEdit(HostPanel)
        self.password_edit.setObjectName(u"password_edit")
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)

        self.form_layout.setWidget(5, QFormLayout.ItemRole.FieldRole, self.password_edit)

        self.sudo_check = QCheckBox(HostPanel)
        self.sudo_check.setObjectName(u"sudo_check")

        self.form_layout.setWidget(6, QFormLayout.ItemRole.SpanningRole, self.sudo_check)


        self.panel_layout.addLayout(self.form_layout)

        self.connect_layout = QHBoxLayout()
        self.connect_layout.setObjectName(u"connect_layout")
        self.connect_button = QPushButton(HostPanel)
        self.connect_button.setObjectName(u"connect_button")

        self.connect_layout.addWidget(self.connect_button)

        self.busy_bar = QProgressBar(HostPanel)
        self.busy_bar.setObjectName(u"busy_bar")
        self.busy_bar.setMaximum(0)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.setMaximumSize(QSize(140, 12))

        self.connect_layout.addWidget(self.busy_bar)

        self.connect_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.connect_layout.addItem(self.connect_spacer)


        self.panel_layout.addLayout(self.connect_layout)

        self.status_frame = QFrame(HostPanel)
        self.status_frame.setObjectName(u"status_frame")
        self.status_frame.setFrameShape(QFrame.Shape.NoFrame)
        self.status_layout = QVBoxLayout(self.status_frame)
        self.status_layout.setObjectName(u"status_layout")
        self.status_label = QLabel(self.status_frame)
        self.status_label.setObjectName(u"status_label")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.status_layout.addWidget(self.status_label)


        self.panel_layout.addWidget(self.status_frame)

        self.panel_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Expanding)

        self.panel_layout.addItem(self.panel_spacer)

#if QT_CONFIG(shortcut)
        self.host_label.setBuddy(self.host_combo)
        self.user_label.setBuddy(self.user_edit)
        self.port_label.setBuddy(self.port_spin)
        self.auth_label.setBuddy(self.auth_combo)
        self.key_label.setBuddy(self.key_edit)
        self.password_label.setBuddy(self.password_edit)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(HostPanel)

        QMetaObject.connectSlotsByName(HostPanel)
    # setupUi

    def retranslateUi(self, HostPanel):
        self.host_label.setText(QCoreApplication.translate("HostPanel", u"&Host:", None))
#if QT_CONFIG(accessibility)
        self.host_combo.setAccessibleName(QCoreApplication.translate("HostPanel", u"Host", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.host_combo.setAccessibleDescription(QCoreApplication.translate("HostPanel", u"user@host, user@host:port, an SSH config alias, or This computer", None))
#endif // QT_CONFIG(accessibility)
        self.user_label.setText(QCoreApplication.translate("HostPanel", u"&User:", None))
        self.user_edit.setPlaceholderText(QCoreApplication.translate("HostPanel", u"from SSH config", None))
#if QT_CONFIG(accessibility)
        self.user_edit.setAccessibleName(QCoreApplication.translate("HostPanel", u"User name", None))
#endif // QT_CONFIG(accessibility)
        self.port_label.setText(QCoreApplication.translate("HostPanel", u"&Port:", None))
        self.port_spin.setSpecialValueText(QCoreApplication.translate("HostPanel", u"from SSH config", None))
#if QT_CONFIG(accessibility)
        self.port_spin.setAccessibleName(QCoreApplication.translate("HostPanel", u"SSH port", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.port_spin.setAccessibleDescription(QCoreApplication.translate("HostPanel", u"0 uses the port from the SSH config", None))
#endif // QT_CONFIG(accessibility)
        self.auth_label.setText(QCoreApplication.translate("HostPanel", u"&Log in with:", None))
        self.auth_combo.setItemText(0, QCoreApplication.translate("HostPanel", u"SSH agent or default keys", None))
        self.auth_combo.setItemText(1, QCoreApplication.translate("HostPanel", u"Key file", None))
        self.auth_combo.setItemText(2, QCoreApplication.translate("HostPanel", u"Password", None))

#if QT_CONFIG(accessibility)
        self.auth_combo.setAccessibleName(QCoreApplication.translate("HostPanel", u"Log in with", None))
#endif // QT_CONFIG(accessibility)
        self.key_label.setText(QCoreApplication.translate("HostPanel", u"&Key file:", None))
        self.key_edit.setPlaceholderText(QCoreApplication.translate("HostPanel", u"~/.ssh/id_ed25519", None))
#if QT_CONFIG(accessibility)
        self.key_edit.setAccessibleName(QCoreApplication.translate("HostPanel", u"Key file", None))
#endif // QT_CONFIG(accessibility)
        self.key_browse_button.setText(QCoreApplication.translate("HostPanel", u"\u2026", None))
#if QT_CONFIG(accessibility)
        self.key_browse_button.setAccessibleName(QCoreApplication.translate("HostPanel", u"Choose key file", None))
#endif // QT_CONFIG(accessibility)
        self.password_label.setText(QCoreApplication.translate("HostPanel", u"Pass&word:", None))
        self.password_edit.setPlaceholderText(QCoreApplication.translate("HostPanel", u"used only for this session, never stored", None))
#if QT_CONFIG(accessibility)
        self.password_edit.setAccessibleName(QCoreApplication.translate("HostPanel", u"Password", None))
#endif // QT_CONFIG(accessibility)
        self.sudo_check.setText(QCoreApplication.translate("HostPanel", u"Run zfs through &sudo (sudo -n)", None))
#if QT_CONFIG(accessibility)
        self.sudo_check.setAccessibleName(QCoreApplication.translate("HostPanel", u"Use sudo", None))
#endif // QT_CONFIG(accessibility)
        self.connect_button.setText(QCoreApplication.translate("HostPanel", u"&Connect", None))
#if QT_CONFIG(accessibility)
        self.connect_button.setAccessibleName(QCoreApplication.translate("HostPanel", u"Connect", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.connect_button.setAccessibleDescription(QCoreApplication.translate("HostPanel", u"Open the SSH session and look at what the host has", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleName(QCoreApplication.translate("HostPanel", u"Working", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleDescription(QCoreApplication.translate("HostPanel", u"Shown while a call to the host runs", None))
#endif // QT_CONFIG(accessibility)
        self.status_label.setText("")
#if QT_CONFIG(accessibility)
        self.status_label.setAccessibleName(QCoreApplication.translate("HostPanel", u"Connection status", None))
#endif // QT_CONFIG(accessibility)
        pass
    # retranslateUi

