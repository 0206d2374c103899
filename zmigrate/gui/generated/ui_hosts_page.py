# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'hosts_page.ui'
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
from PySide6.QtWidgets import (QApplication, QFrame, QGroupBox, QHBoxLayout,
    QLabel, QPushButton, QSizePolicy, QSpacerItem,
    QVBoxLayout, QWidget, QWizardPage)

class Ui_HostsPage(object):
    def setupUi(self, HostsPage):
        if not HostsPage.objectName():
            HostsPage.setObjectName(u"HostsPage")
        self.page_layout = QVBoxLayout(HostsPage)
        self.page_layout.setSpacing(12)
        self.page_layout.setObjectName(u"page_layout")
        self.first_run_frame = QFrame(HostsPage)
        self.first_run_frame.setObjectName(u"first_run_frame")
        self.first_run_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.first_run_layout = QVBoxLayout(self.first_run_frame)
        self.first_run_layout.setObjectName(u"first_run_layout")
        self.first_run_layout.setContentsMargins(12, 8, 12, 8)
        self.first_run_label = QLabel(self.first_run_frame)
        self.first_run_label.setObjectName(u"first_run_label")
        self.first_run_label.setTextFormat(Qt.TextFormat.RichText)
        self.first_run_label.setWordWrap(True)
        self.first_run_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.first_run_layout.addWidget(self.first_run_label)


        self.page_layout.addWidget(self.first_run_frame)

        self.sides_layout = QHBoxLayout()
        self.sides_layout.setSpacing(16)
        self.sides_layout.setObjectName(u"sides_layout")
        self.source_group = QGroupBox(HostsPage)
        self.source_group.setObjectName(u"source_group")
        self.source_group_layout = QVBoxLayout(self.source_group)
        self.source_group_layout.setObjectName(u"source_group_layout")
        self.source_group_layout.setContentsMargins(14, 14, 14, 14)
        self.source_panel_host = QWidget(self.source_group)
        self.source_panel_host.setObjectName(u"source_panel_host")

        self.source_group_layout.addWidget(self.source_panel_host)


        self.sides_layout.addWidget(self.source_group)

        self.destination_group = QGroupBox(HostsPage)
        self.destination_group.setObjectName(u"destination_group")
        self.destination_group_layout = QVBoxLayout(self.destination_group)
        self.destination_group_layout.setObjectName(u"destination_group_layout")
        self.destination_group_layout.setContentsMargins(14, 14, 14, 14)
        self.destination_panel_host = QWidget(self.destination_group)
        self.destination_panel_host.setObjectName(u"destination_panel_host")

        self.destination_group_layout.addWidget(self.destination_panel_host)


        self.sides_layout.addWidget(self.destination_group)


        self.page_layout.addLayout(self.sides_layout)

        self.go_live_frame = QFrame(HostsPage)
        self.go_live_frame.setObjectName(u"go_live_frame")
        self.go_live_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.go_live_layout = QVBoxLayout(self.go_live_frame)
        self.go_live_layout.setObjectName(u"go_live_layout")
        self.go_live_layout.setContentsMargins(12, 8, 12, 8)
        self.go_live_offer_label = QLabel(self.go_live_frame)
        self.go_live_offer_label.setObjectName(u"go_live_offer_label")
        self.go_live_offer_label.setTextFormat(Qt.TextFormat.RichText)
        self.go_live_offer_label.setWordWrap(True)

        self.go_live_layout.addWidget(self.go_live_offer_label)

        self.go_live_buttons_layout = QHBoxLayout()
        self.go_live_buttons_layout.setObjectName(u"go_live_buttons_layout")
        self.go_live_button = QPushButton(self.go_live_frame)
        self.go_live_button.setObjectName(u"go_live_button")

        self.go_live_buttons_layout.addWidget(self.go_live_button)

        self.go_back_button = QPushButton(self.go_live_frame)
        self.go_back_button.setObjectName(u"go_back_button")

        self.go_live_buttons_layout.addWidget(self.go_back_button)

        self.go_live_spacer = QSpacerItem(0, 0, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.go_live_buttons_layout.addItem(self.go_live_spacer)


        self.go_live_layout.addLayout(self.go_live_buttons_layout)

        self.go_live_label = QLabel(self.go_live_frame)
        self.go_live_label.setObjectName(u"go_live_label")
        self.go_live_label.setTextFormat(Qt.TextFormat.RichText)
        self.go_live_label.setWordWrap(True)

        self.go_live_layout.addWidget(self.go_live_label)


        self.page_layout.addWidget(self.go_live_frame)

        self.hint_layout = QHBoxLayout()
        self.hint_layout.setObjectName(u"hint_layout")
        self.hint_label = QLabel(HostsPage)
        self.hint_label.setObjectName(u"hint_label")
        self.hint_label.setWordWrap(True)

        self.hint_layout.addWidget(self.hint_label)

        self.history_button = QPushButton(HostsPage)
        self.history_button.setObjectName(u"history_button")

        self.hint_layout.addWidget(self.history_button)

        self.hint_layout.setStretch(0, 1)

        self.page_layout.addLayout(self.hint_layout)


        self.retranslateUi(HostsPage)

        QMetaObject.connectSlotsByName(HostsPage)
    # setupUi

    def retranslateUi(self, HostsPage):
        HostsPage.setTitle(QCoreApplication.translate("HostsPage", u"Hosts", None))
        HostsPage.setSubTitle(QCoreApplication.translate("HostsPage", u"Connect to the host that has the data and the one that receives it. They may be the same machine.", None))
        self.first_run_label.setText("")
#if QT_CONFIG(accessibility)
        self.first_run_label.setAccessibleName(QCoreApplication.translate("HostsPage", u"First steps", None))
#endif // QT_CONFIG(accessibility)
        self.source_group.setTitle(QCoreApplication.translate("HostsPage", u"Source: sends", None))
        self.destination_group.setTitle(QCoreApplication.translate("HostsPage", u"Destination: receives", None))
#if QT_CONFIG(accessibility)
        self.go_live_frame.setAccessibleName(QCoreApplication.translate("HostsPage", u"Going live", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.go_live_offer_label.setAccessibleName(QCoreApplication.translate("HostsPage", u"A final sync of these hosts", None))
#endif // QT_CONFIG(accessibility)
        self.go_live_button.setText(QCoreApplication.translate("HostsPage", u"Go &live", None))
#if QT_CONFIG(accessibility)
        self.go_live_button.setAccessibleName(QCoreApplication.translate("HostsPage", u"Go live", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.go_live_button.setToolTip(QCoreApplication.translate("HostsPage", u"Bring the copy of that final sync into service: read-only off, mounted where the source was (the source's datasets unmounted first when both are on one host). Every command is shown before it runs.", None))
#endif // QT_CONFIG(tooltip)
        self.go_back_button.setText(QCoreApplication.translate("HostsPage", u"Go &back", None))
#if QT_CONFIG(accessibility)
        self.go_back_button.setAccessibleName(QCoreApplication.translate("HostsPage", u"Go back", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.go_back_button.setToolTip(QCoreApplication.translate("HostsPage", u"Undo what Go live did: the copy unmounted and read-only again, the source mounted as before", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.go_live_label.setAccessibleName(QCoreApplication.translate("HostsPage", u"What going live did", None))
#endif // QT_CONFIG(accessibility)
        self.hint_label.setText(QCoreApplication.translate("HostsPage", u"Hosts come from your SSH config, recent transfers, or type user@host. Keys and the SSH agent are tried first; unknown host keys are shown to you before anything is sent.", None))
        self.history_button.setText(QCoreApplication.translate("HostsPage", u"&History\u2026", None))
#if QT_CONFIG(accessibility)
        self.history_button.setAccessibleName(QCoreApplication.translate("HostsPage", u"Transfer history", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.history_button.setToolTip(QCoreApplication.translate("HostsPage", u"Every transfer so far, with its plots; compare two of them", None))
#endif // QT_CONFIG(tooltip)
    # retranslateUi

