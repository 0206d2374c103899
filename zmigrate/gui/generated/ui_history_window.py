# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'history_window.ui'
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
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QComboBox, QHBoxLayout,
    QHeaderView, QLabel, QLineEdit, QPushButton,
    QSizePolicy, QSplitter, QStackedWidget, QTableView,
    QVBoxLayout, QWidget)

class Ui_HistoryWindow(object):
    def setupUi(self, HistoryWindow):
        if not HistoryWindow.objectName():
            HistoryWindow.setObjectName(u"HistoryWindow")
        self.window_layout = QVBoxLayout(HistoryWindow)
        self.window_layout.setSpacing(8)
        self.window_layout.setObjectName(u"window_layout")
        self.filter_layout = QHBoxLayout()
        self.filter_layout.setObjectName(u"filter_layout")
        self.filter_label = QLabel(HistoryWindow)
        self.filter_label.setObjectName(u"filter_label")

        self.filter_layout.addWidget(self.filter_label)

        self.filter_edit = QLineEdit(HistoryWindow)
        self.filter_edit.setObjectName(u"filter_edit")
        self.filter_edit.setClearButtonEnabled(True)

        self.filter_layout.addWidget(self.filter_edit)

        self.outcome_label = QLabel(HistoryWindow)
        self.outcome_label.setObjectName(u"outcome_label")

        self.filter_layout.addWidget(self.outcome_label)

        self.outcome_combo = QComboBox(HistoryWindow)
        self.outcome_combo.setObjectName(u"outcome_combo")

        self.filter_layout.addWidget(self.outcome_combo)

        self.refresh_button = QPushButton(HistoryWindow)
        self.refresh_button.setObjectName(u"refresh_button")

        self.filter_layout.addWidget(self.refresh_button)

        self.compare_button = QPushButton(HistoryWindow)
        self.compare_button.setObjectName(u"compare_button")

        self.filter_layout.addWidget(self.compare_button)

        self.filter_layout.setStretch(1, 1)

        self.window_layout.addLayout(self.filter_layout)

        self.splitter = QSplitter(HistoryWindow)
        self.splitter.setObjectName(u"splitter")
        self.splitter.setOrientation(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.job_table = QTableView(self.splitter)
        self.job_table.setObjectName(u"job_table")
        self.job_table.setAlternatingRowColors(True)
        self.job_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.job_table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.job_table.setSortingEnabled(True)
        self.job_table.setWordWrap(False)
        self.splitter.addWidget(self.job_table)
        self.detail_stack = QStackedWidget(self.splitter)
        self.detail_stack.setObjectName(u"detail_stack")
        self.empty_page = QWidget()
        self.empty_page.setObjectName(u"empty_page")
        self.empty_layout = QVBoxLayout(self.empty_page)
        self.empty_layout.setObjectName(u"empty_layout")
        self.empty_label = QLabel(self.empty_page)
        self.empty_label.setObjectName(u"empty_label")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)

        self.empty_layout.addWidget(self.empty_label)

        self.detail_stack.addWidget(self.empty_page)
        self.job_page = QWidget()
        self.job_page.setObjectName(u"job_page")
        self.detail_stack.addWidget(self.job_page)
        self.compare_page = QWidget()
        self.compare_page.setObjectName(u"compare_page")
        self.detail_stack.addWidget(self.compare_page)
        self.splitter.addWidget(self.detail_stack)

        self.window_layout.addWidget(self.splitter)

        self.status_label = QLabel(HistoryWindow)
        self.status_label.setObjectName(u"status_label")

        self.window_layout.addWidget(self.status_label)

#if QT_CONFIG(shortcut)
        self.filter_label.setBuddy(self.filter_edit)
        self.outcome_label.setBuddy(self.outcome_combo)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(HistoryWindow)

        QMetaObject.connectSlotsByName(HistoryWindow)
    # setupUi

    def retranslateUi(self, HistoryWindow):
        HistoryWindow.setWindowTitle(QCoreApplication.translate("HistoryWindow", u"zmigrate: transfer history", None))
        self.filter_label.setText(QCoreApplication.translate("HistoryWindow", u"&Filter:", None))
        self.filter_edit.setPlaceholderText(QCoreApplication.translate("HistoryWindow", u"host, dataset or snapshot", None))
#if QT_CONFIG(accessibility)
        self.filter_edit.setAccessibleName(QCoreApplication.translate("HistoryWindow", u"Filter jobs", None))
#endif // QT_CONFIG(accessibility)
        self.outcome_label.setText(QCoreApplication.translate("HistoryWindow", u"&Outcome:", None))
#if QT_CONFIG(accessibility)
        self.outcome_combo.setAccessibleName(QCoreApplication.translate("HistoryWindow", u"Show jobs with this outcome", None))
#endif // QT_CONFIG(accessibility)
        self.refresh_button.setText(QCoreApplication.translate("HistoryWindow", u"&Refresh", None))
#if QT_CONFIG(accessibility)
        self.refresh_button.setAccessibleName(QCoreApplication.translate("HistoryWindow", u"Read the history again", None))
#endif // QT_CONFIG(accessibility)
        self.compare_button.setText(QCoreApplication.translate("HistoryWindow", u"&Compare", None))
#if QT_CONFIG(tooltip)
        self.compare_button.setToolTip(QCoreApplication.translate("HistoryWindow", u"Select two jobs (Ctrl+click) to overlay their receive rates and receiver fill", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.compare_button.setAccessibleName(QCoreApplication.translate("HistoryWindow", u"Compare the two selected jobs", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.job_table.setAccessibleName(QCoreApplication.translate("HistoryWindow", u"Transfers, newest first", None))
#endif // QT_CONFIG(accessibility)
        self.empty_label.setText(QCoreApplication.translate("HistoryWindow", u"Select a transfer to see its plots and commands; select two and press Compare to overlay them.", None))
        self.status_label.setText("")
#if QT_CONFIG(accessibility)
        self.status_label.setAccessibleName(QCoreApplication.translate("HistoryWindow", u"History status", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

