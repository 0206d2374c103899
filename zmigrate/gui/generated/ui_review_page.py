# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'review_page.ui'
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
from PySide6.QtWidgets import (QApplication, QHBoxLayout, QLabel, QPlainTextEdit,
    QProgressBar, QPushButton, QSizePolicy, QSpacerItem,
    QVBoxLayout, QWidget, QWizardPage)

class Ui_ReviewPage(object):
    def setupUi(self, ReviewPage):
        if not ReviewPage.objectName():
            ReviewPage.setObjectName(u"ReviewPage")
        self.page_layout = QVBoxLayout(ReviewPage)
        self.page_layout.setSpacing(10)
        self.page_layout.setObjectName(u"page_layout")
        self.busy_layout = QHBoxLayout()
        self.busy_layout.setObjectName(u"busy_layout")
        self.busy_bar = QProgressBar(ReviewPage)
        self.busy_bar.setObjectName(u"busy_bar")
        self.busy_bar.setMaximum(0)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.setMaximumSize(QSize(140, 12))

        self.busy_layout.addWidget(self.busy_bar)

        self.busy_label = QLabel(ReviewPage)
        self.busy_label.setObjectName(u"busy_label")
        self.busy_label.setWordWrap(True)
        self.busy_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.busy_layout.addWidget(self.busy_label)

        self.busy_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.busy_layout.addItem(self.busy_spacer)


        self.page_layout.addLayout(self.busy_layout)

        self.summary_label = QLabel(ReviewPage)
        self.summary_label.setObjectName(u"summary_label")
        self.summary_label.setTextFormat(Qt.RichText)
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.summary_label)

        self.facts_layout = QHBoxLayout()
        self.facts_layout.setSpacing(24)
        self.facts_layout.setObjectName(u"facts_layout")
        self.size_label = QLabel(ReviewPage)
        self.size_label.setObjectName(u"size_label")

        self.facts_layout.addWidget(self.size_label)

        self.time_label = QLabel(ReviewPage)
        self.time_label.setObjectName(u"time_label")

        self.facts_layout.addWidget(self.time_label)

        self.facts_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.facts_layout.addItem(self.facts_spacer)


        self.page_layout.addLayout(self.facts_layout)

        self.warnings_label = QLabel(ReviewPage)
        self.warnings_label.setObjectName(u"warnings_label")
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.warnings_label)

        self.commands_header = QHBoxLayout()
        self.commands_header.setObjectName(u"commands_header")
        self.commands_label = QLabel(ReviewPage)
        self.commands_label.setObjectName(u"commands_label")

        self.commands_header.addWidget(self.commands_label)

        self.commands_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.commands_header.addItem(self.commands_spacer)

        self.copy_button = QPushButton(ReviewPage)
        self.copy_button.setObjectName(u"copy_button")

        self.commands_header.addWidget(self.copy_button)


        self.page_layout.addLayout(self.commands_header)

        self.commands_edit = QPlainTextEdit(ReviewPage)
        self.commands_edit.setObjectName(u"commands_edit")
        self.commands_edit.setReadOnly(True)
        self.commands_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)

        self.page_layout.addWidget(self.commands_edit)

        self.error_label = QLabel(ReviewPage)
        self.error_label.setObjectName(u"error_label")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.error_label)

        self.page_layout.setStretch(5, 1)
#if QT_CONFIG(shortcut)
        self.commands_label.setBuddy(self.commands_edit)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(ReviewPage)

        QMetaObject.connectSlotsByName(ReviewPage)
    # setupUi

    def retranslateUi(self, ReviewPage):
        ReviewPage.setTitle(QCoreApplication.translate("ReviewPage", u"Review", None))
        ReviewPage.setSubTitle(QCoreApplication.translate("ReviewPage", u"Nothing has run yet. This is what will happen.", None))
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Working", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.busy_bar.setAccessibleDescription(QCoreApplication.translate("ReviewPage", u"Shown while a call to the host runs", None))
#endif // QT_CONFIG(accessibility)
        self.busy_label.setText("")
#if QT_CONFIG(accessibility)
        self.busy_label.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Checking", None))
#endif // QT_CONFIG(accessibility)
        self.summary_label.setText("")
#if QT_CONFIG(accessibility)
        self.summary_label.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Plan summary", None))
#endif // QT_CONFIG(accessibility)
        self.size_label.setText("")
#if QT_CONFIG(accessibility)
        self.size_label.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Estimated size", None))
#endif // QT_CONFIG(accessibility)
        self.time_label.setText("")
#if QT_CONFIG(accessibility)
        self.time_label.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Estimated time", None))
#endif // QT_CONFIG(accessibility)
        self.warnings_label.setText("")
#if QT_CONFIG(accessibility)
        self.warnings_label.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Warnings", None))
#endif // QT_CONFIG(accessibility)
        self.commands_label.setText(QCoreApplication.translate("ReviewPage", u"&Commands each host will run:", None))
        self.copy_button.setText(QCoreApplication.translate("ReviewPage", u"Cop&y", None))
#if QT_CONFIG(accessibility)
        self.copy_button.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Copy commands", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.commands_edit.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Commands", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.commands_edit.setAccessibleDescription(QCoreApplication.translate("ReviewPage", u"The exact shell line for each host", None))
#endif // QT_CONFIG(accessibility)
        self.error_label.setText("")
#if QT_CONFIG(accessibility)
        self.error_label.setAccessibleName(QCoreApplication.translate("ReviewPage", u"Problems", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

