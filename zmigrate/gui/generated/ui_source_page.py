# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'source_page.ui'
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
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QCheckBox, QFrame,
    QHBoxLayout, QHeaderView, QLabel, QLineEdit,
    QProgressBar, QPushButton, QRadioButton, QSizePolicy,
    QSpacerItem, QTreeView, QVBoxLayout, QWidget,
    QWizardPage)

class Ui_SourcePage(object):
    def setupUi(self, SourcePage):
        if not SourcePage.objectName():
            SourcePage.setObjectName(u"SourcePage")
        self.page_layout = QVBoxLayout(SourcePage)
        self.page_layout.setSpacing(8)
        self.page_layout.setObjectName(u"page_layout")
        self.filter_layout = QHBoxLayout()
        self.filter_layout.setObjectName(u"filter_layout")
        self.filter_label = QLabel(SourcePage)
        self.filter_label.setObjectName(u"filter_label")

        self.filter_layout.addWidget(self.filter_label)

        self.filter_edit = QLineEdit(SourcePage)
        self.filter_edit.setObjectName(u"filter_edit")
        self.filter_edit.setClearButtonEnabled(True)

        self.filter_layout.addWidget(self.filter_edit)

        self.busy_bar = QProgressBar(SourcePage)
        self.busy_bar.setObjectName(u"busy_bar")
        self.busy_bar.setMaximum(0)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.setMaximumSize(QSize(140, 12))

        self.filter_layout.addWidget(self.busy_bar)

        self.reload_button = QPushButton(SourcePage)
        self.reload_button.setObjectName(u"reload_button")

        self.filter_layout.addWidget(self.reload_button)


        self.page_layout.addLayout(self.filter_layout)

        self.dataset_tree = QTreeView(SourcePage)
        self.dataset_tree.setObjectName(u"dataset_tree")
        self.dataset_tree.setAlternatingRowColors(True)
        self.dataset_tree.setUniformRowHeights(True)
        self.dataset_tree.setSortingEnabled(False)
        self.dataset_tree.setAllColumnsShowFocus(True)
        self.dataset_tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.dataset_tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)

        self.page_layout.addWidget(self.dataset_tree)

        self.status_label = QLabel(SourcePage)
        self.status_label.setObjectName(u"status_label")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.status_label)

        self.selection_label = QLabel(SourcePage)
        self.selection_label.setObjectName(u"selection_label")
        self.selection_label.setWordWrap(True)

        self.page_layout.addWidget(self.selection_label)

        self.tree_frame = QFrame(SourcePage)
        self.tree_frame.setObjectName(u"tree_frame")
        self.tree_layout = QVBoxLayout(self.tree_frame)
        self.tree_layout.setObjectName(u"tree_layout")
        self.tree_layout.setContentsMargins(0, 0, 0, 0)
        self.children_check = QCheckBox(self.tree_frame)
        self.children_check.setObjectName(u"children_check")
        self.children_check.setChecked(True)

        self.tree_layout.addWidget(self.children_check)

        self.tree_label = QLabel(self.tree_frame)
        self.tree_label.setObjectName(u"tree_label")
        self.tree_label.setWordWrap(True)

        self.tree_layout.addWidget(self.tree_label)

        self.snapshot_layout = QHBoxLayout()
        self.snapshot_layout.setObjectName(u"snapshot_layout")
        self.snapshot_now_radio = QRadioButton(self.tree_frame)
        self.snapshot_now_radio.setObjectName(u"snapshot_now_radio")

        self.snapshot_layout.addWidget(self.snapshot_now_radio)

        self.snapshot_existing_radio = QRadioButton(self.tree_frame)
        self.snapshot_existing_radio.setObjectName(u"snapshot_existing_radio")

        self.snapshot_layout.addWidget(self.snapshot_existing_radio)

        self.snapshot_spacer = QSpacerItem(0, 0, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.snapshot_layout.addItem(self.snapshot_spacer)


        self.tree_layout.addLayout(self.snapshot_layout)


        self.page_layout.addWidget(self.tree_frame)

        self.page_layout.setStretch(1, 1)
#if QT_CONFIG(shortcut)
        self.filter_label.setBuddy(self.filter_edit)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(SourcePage)

        QMetaObject.connectSlotsByName(SourcePage)
    # setupUi

    def retranslateUi(self, SourcePage):
        SourcePage.setTitle(QCoreApplication.translate("SourcePage", u"What to send", None))
        SourcePage.setSubTitle(QCoreApplication.translate("SourcePage", u"Pick a snapshot, or a pool or dataset to move with its children.", None))
        self.filter_label.setText(QCoreApplication.translate("SourcePage", u"&Filter:", None))
        self.filter_edit.setPlaceholderText(QCoreApplication.translate("SourcePage", u"dataset or snapshot name", None))
#if QT_CONFIG(accessibility)
        self.filter_edit.setAccessibleName(QCoreApplication.translate("SourcePage", u"Filter datasets and snapshots", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleName(QCoreApplication.translate("SourcePage", u"Working", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleDescription(QCoreApplication.translate("SourcePage", u"Shown while a call to the host runs", None))
#endif // QT_CONFIG(accessibility)
        self.reload_button.setText(QCoreApplication.translate("SourcePage", u"&Reload", None))
#if QT_CONFIG(accessibility)
        self.reload_button.setAccessibleName(QCoreApplication.translate("SourcePage", u"Reload datasets", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.dataset_tree.setAccessibleName(QCoreApplication.translate("SourcePage", u"Source datasets and snapshots", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.dataset_tree.setAccessibleDescription(QCoreApplication.translate("SourcePage", u"Pool, datasets and their snapshots, newest first", None))
#endif // QT_CONFIG(accessibility)
        self.status_label.setText("")
#if QT_CONFIG(accessibility)
        self.status_label.setAccessibleName(QCoreApplication.translate("SourcePage", u"Source status", None))
#endif // QT_CONFIG(accessibility)
        self.selection_label.setText(QCoreApplication.translate("SourcePage", u"No snapshot chosen yet.", None))
#if QT_CONFIG(accessibility)
        self.selection_label.setAccessibleName(QCoreApplication.translate("SourcePage", u"Chosen snapshot", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.tree_frame.setAccessibleName(QCoreApplication.translate("SourcePage", u"Tree options", None))
#endif // QT_CONFIG(accessibility)
        self.children_check.setText(QCoreApplication.translate("SourcePage", u"With its child datasets (untick a child in the list to leave it and its descendants out)", None))
#if QT_CONFIG(accessibility)
        self.children_check.setAccessibleName(QCoreApplication.translate("SourcePage", u"Include child datasets", None))
#endif // QT_CONFIG(accessibility)
        self.tree_label.setText("")
#if QT_CONFIG(accessibility)
        self.tree_label.setAccessibleName(QCoreApplication.translate("SourcePage", u"Tree totals", None))
#endif // QT_CONFIG(accessibility)
        self.snapshot_now_radio.setText(QCoreApplication.translate("SourcePage", u"Take a snapshot now", None))
#if QT_CONFIG(accessibility)
        self.snapshot_now_radio.setAccessibleName(QCoreApplication.translate("SourcePage", u"Take a snapshot now", None))
#endif // QT_CONFIG(accessibility)
        self.snapshot_existing_radio.setText(QCoreApplication.translate("SourcePage", u"Send an existing snapshot", None))
#if QT_CONFIG(accessibility)
        self.snapshot_existing_radio.setAccessibleName(QCoreApplication.translate("SourcePage", u"Send the newest snapshot the datasets share", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

