# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'destination_page.ui'
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
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QButtonGroup, QCheckBox,
    QFormLayout, QFrame, QHBoxLayout, QHeaderView,
    QLabel, QLineEdit, QProgressBar, QPushButton,
    QRadioButton, QSizePolicy, QTreeView, QVBoxLayout,
    QWidget, QWizardPage)

class Ui_DestinationPage(object):
    def setupUi(self, DestinationPage):
        if not DestinationPage.objectName():
            DestinationPage.setObjectName(u"DestinationPage")
        self.page_layout = QVBoxLayout(DestinationPage)
        self.page_layout.setSpacing(8)
        self.page_layout.setObjectName(u"page_layout")
        self.filter_layout = QHBoxLayout()
        self.filter_layout.setObjectName(u"filter_layout")
        self.filter_label = QLabel(DestinationPage)
        self.filter_label.setObjectName(u"filter_label")

        self.filter_layout.addWidget(self.filter_label)

        self.filter_edit = QLineEdit(DestinationPage)
        self.filter_edit.setObjectName(u"filter_edit")
        self.filter_edit.setClearButtonEnabled(True)

        self.filter_layout.addWidget(self.filter_edit)

        self.busy_bar = QProgressBar(DestinationPage)
        self.busy_bar.setObjectName(u"busy_bar")
        self.busy_bar.setMaximum(0)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.setMaximumSize(QSize(140, 12))

        self.filter_layout.addWidget(self.busy_bar)

        self.reload_button = QPushButton(DestinationPage)
        self.reload_button.setObjectName(u"reload_button")

        self.filter_layout.addWidget(self.reload_button)


        self.page_layout.addLayout(self.filter_layout)

        self.dataset_tree = QTreeView(DestinationPage)
        self.dataset_tree.setObjectName(u"dataset_tree")
        self.dataset_tree.setAlternatingRowColors(True)
        self.dataset_tree.setUniformRowHeights(True)
        self.dataset_tree.setSortingEnabled(False)
        self.dataset_tree.setAllColumnsShowFocus(True)
        self.dataset_tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.dataset_tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)

        self.page_layout.addWidget(self.dataset_tree)

        self.target_layout = QFormLayout()
        self.target_layout.setObjectName(u"target_layout")
        self.target_layout.setHorizontalSpacing(10)
        self.parent_label = QLabel(DestinationPage)
        self.parent_label.setObjectName(u"parent_label")

        self.target_layout.setWidget(0, QFormLayout.ItemRole.LabelRole, self.parent_label)

        self.parent_edit = QLineEdit(DestinationPage)
        self.parent_edit.setObjectName(u"parent_edit")

        self.target_layout.setWidget(0, QFormLayout.ItemRole.FieldRole, self.parent_edit)

        self.name_label = QLabel(DestinationPage)
        self.name_label.setObjectName(u"name_label")

        self.target_layout.setWidget(1, QFormLayout.ItemRole.LabelRole, self.name_label)

        self.name_edit = QLineEdit(DestinationPage)
        self.name_edit.setObjectName(u"name_edit")

        self.target_layout.setWidget(1, QFormLayout.ItemRole.FieldRole, self.name_edit)

        self.into_check = QCheckBox(DestinationPage)
        self.into_check.setObjectName(u"into_check")

        self.target_layout.setWidget(2, QFormLayout.ItemRole.FieldRole, self.into_check)


        self.page_layout.addLayout(self.target_layout)

        self.mount_frame = QFrame(DestinationPage)
        self.mount_frame.setObjectName(u"mount_frame")
        self.mount_layout = QHBoxLayout(self.mount_frame)
        self.mount_layout.setObjectName(u"mount_layout")
        self.mount_layout.setContentsMargins(0, 0, 0, 0)
        self.unmounted_radio = QRadioButton(self.mount_frame)
        self.unmounted_radio.setObjectName(u"unmounted_radio")
        self.unmounted_radio.setChecked(True)

        self.mount_layout.addWidget(self.unmounted_radio)

        self.mount_root_radio = QRadioButton(self.mount_frame)
        self.mount_root_radio.setObjectName(u"mount_root_radio")

        self.mount_layout.addWidget(self.mount_root_radio)

        self.mount_root_edit = QLineEdit(self.mount_frame)
        self.mount_root_edit.setObjectName(u"mount_root_edit")

        self.mount_layout.addWidget(self.mount_root_edit)


        self.page_layout.addWidget(self.mount_frame)

        self.state_frame = QFrame(DestinationPage)
        self.state_frame.setObjectName(u"state_frame")
        self.state_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.state_layout = QVBoxLayout(self.state_frame)
        self.state_layout.setObjectName(u"state_layout")
        self.state_layout.setContentsMargins(12, 10, 12, 10)
        self.state_label = QLabel(self.state_frame)
        self.state_label.setObjectName(u"state_label")
        self.state_label.setWordWrap(True)
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.state_layout.addWidget(self.state_label)

        self.resume_radio = QRadioButton(self.state_frame)
        self.partial_group = QButtonGroup(DestinationPage)
        self.partial_group.setObjectName(u"partial_group")
        self.partial_group.addButton(self.resume_radio)
        self.resume_radio.setObjectName(u"resume_radio")

        self.state_layout.addWidget(self.resume_radio)

        self.discard_radio = QRadioButton(self.state_frame)
        self.partial_group.addButton(self.discard_radio)
        self.discard_radio.setObjectName(u"discard_radio")

        self.state_layout.addWidget(self.discard_radio)

        self.partial_note = QLabel(self.state_frame)
        self.partial_note.setObjectName(u"partial_note")
        self.partial_note.setWordWrap(True)

        self.state_layout.addWidget(self.partial_note)

        self.force_check = QCheckBox(self.state_frame)
        self.force_check.setObjectName(u"force_check")

        self.state_layout.addWidget(self.force_check)


        self.page_layout.addWidget(self.state_frame)

        self.status_label = QLabel(DestinationPage)
        self.status_label.setObjectName(u"status_label")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.status_label)

        self.page_layout.setStretch(1, 1)
#if QT_CONFIG(shortcut)
        self.filter_label.setBuddy(self.filter_edit)
        self.parent_label.setBuddy(self.parent_edit)
        self.name_label.setBuddy(self.name_edit)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(DestinationPage)

        QMetaObject.connectSlotsByName(DestinationPage)
    # setupUi

    def retranslateUi(self, DestinationPage):
        DestinationPage.setTitle(QCoreApplication.translate("DestinationPage", u"Where it goes", None))
        DestinationPage.setSubTitle(QCoreApplication.translate("DestinationPage", u"Pick the parent dataset on the destination and the name of the copy.", None))
        self.filter_label.setText(QCoreApplication.translate("DestinationPage", u"&Filter:", None))
        self.filter_edit.setPlaceholderText(QCoreApplication.translate("DestinationPage", u"dataset name", None))
#if QT_CONFIG(accessibility)
        self.filter_edit.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Filter destination datasets", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Working", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleDescription(QCoreApplication.translate("DestinationPage", u"Shown while a call to the host runs", None))
#endif // QT_CONFIG(accessibility)
        self.reload_button.setText(QCoreApplication.translate("DestinationPage", u"&Reload", None))
#if QT_CONFIG(accessibility)
        self.reload_button.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Reload destination datasets", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.dataset_tree.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Destination datasets", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.dataset_tree.setAccessibleDescription(QCoreApplication.translate("DestinationPage", u"Choose the parent of the new dataset", None))
#endif // QT_CONFIG(accessibility)
        self.parent_label.setText(QCoreApplication.translate("DestinationPage", u"&Parent:", None))
        self.parent_edit.setPlaceholderText(QCoreApplication.translate("DestinationPage", u"pick a dataset above", None))
#if QT_CONFIG(accessibility)
        self.parent_edit.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Parent dataset", None))
#endif // QT_CONFIG(accessibility)
        self.name_label.setText(QCoreApplication.translate("DestinationPage", u"&Name:", None))
#if QT_CONFIG(accessibility)
        self.name_edit.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Name of the copy", None))
#endif // QT_CONFIG(accessibility)
        self.into_check.setText(QCoreApplication.translate("DestinationPage", u"&Into the pool itself", None))
#if QT_CONFIG(tooltip)
        self.into_check.setToolTip(QCoreApplication.translate("DestinationPage", u"Receive the tree into the pool's root dataset, as a pool move does (zfs receive -F): its children become the pool's children. Only an empty pool takes it: one with no snapshots, no datasets and no files.", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.into_check.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Into the pool itself", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.mount_frame.setAccessibleName(QCoreApplication.translate("DestinationPage", u"How the tree is received", None))
#endif // QT_CONFIG(accessibility)
        self.unmounted_radio.setText(QCoreApplication.translate("DestinationPage", u"Received &unmounted (-u), mountpoints kept", None))
#if QT_CONFIG(accessibility)
        self.unmounted_radio.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Receive the tree unmounted, mountpoint properties kept", None))
#endif // QT_CONFIG(accessibility)
        self.mount_root_radio.setText(QCoreApplication.translate("DestinationPage", u"&Mounted under", None))
#if QT_CONFIG(accessibility)
        self.mount_root_radio.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Mount the tree under a chosen directory", None))
#endif // QT_CONFIG(accessibility)
        self.mount_root_edit.setPlaceholderText(QCoreApplication.translate("DestinationPage", u"/mnt/copy", None))
#if QT_CONFIG(accessibility)
        self.mount_root_edit.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Directory the tree is mounted under", None))
#endif // QT_CONFIG(accessibility)
        self.state_label.setText("")
#if QT_CONFIG(accessibility)
        self.state_label.setAccessibleName(QCoreApplication.translate("DestinationPage", u"What will happen", None))
#endif // QT_CONFIG(accessibility)
        self.resume_radio.setText(QCoreApplication.translate("DestinationPage", u"Re&sume: send only the rest", None))
#if QT_CONFIG(accessibility)
        self.resume_radio.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Resume the interrupted transfer", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.resume_radio.setAccessibleDescription(QCoreApplication.translate("DestinationPage", u"Sends only what the interrupted transfer did not deliver (zfs send -t)", None))
#endif // QT_CONFIG(accessibility)
        self.discard_radio.setText(QCoreApplication.translate("DestinationPage", u"Dis&card the partial receive and send again", None))
#if QT_CONFIG(accessibility)
        self.discard_radio.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Discard the partial receive", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.discard_radio.setAccessibleDescription(QCoreApplication.translate("DestinationPage", u"zfs receive -A drops only the partially received data, then everything is sent again", None))
#endif // QT_CONFIG(accessibility)
        self.partial_note.setText("")
#if QT_CONFIG(accessibility)
        self.partial_note.setAccessibleName(QCoreApplication.translate("DestinationPage", u"What each choice does", None))
#endif // QT_CONFIG(accessibility)
        self.force_check.setText(QCoreApplication.translate("DestinationPage", u"Roll back (destroys snapshots)", None))
#if QT_CONFIG(accessibility)
        self.force_check.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Force rollback", None))
#endif // QT_CONFIG(accessibility)
        self.status_label.setText("")
#if QT_CONFIG(accessibility)
        self.status_label.setAccessibleName(QCoreApplication.translate("DestinationPage", u"Destination status", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

