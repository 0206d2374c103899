# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'host_key_dialog.ui'
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
from PySide6.QtWidgets import (QApplication, QDialog, QHBoxLayout, QLabel,
    QPushButton, QSizePolicy, QSpacerItem, QVBoxLayout,
    QWidget)

class Ui_HostKeyDialog(object):
    def setupUi(self, HostKeyDialog):
        if not HostKeyDialog.objectName():
            HostKeyDialog.setObjectName(u"HostKeyDialog")
        HostKeyDialog.setModal(True)
        HostKeyDialog.setMinimumSize(QSize(520, 0))
        self.dialog_layout = QVBoxLayout(HostKeyDialog)
        self.dialog_layout.setSpacing(10)
        self.dialog_layout.setObjectName(u"dialog_layout")
        self.dialog_layout.setContentsMargins(18, 18, 18, 14)
        self.intro_label = QLabel(HostKeyDialog)
        self.intro_label.setObjectName(u"intro_label")
        self.intro_label.setWordWrap(True)
        self.intro_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.dialog_layout.addWidget(self.intro_label)

        self.fingerprint_caption = QLabel(HostKeyDialog)
        self.fingerprint_caption.setObjectName(u"fingerprint_caption")

        self.dialog_layout.addWidget(self.fingerprint_caption)

        self.fingerprint_label = QLabel(HostKeyDialog)
        self.fingerprint_label.setObjectName(u"fingerprint_label")
        self.fingerprint_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse|Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.fingerprint_label.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

        self.dialog_layout.addWidget(self.fingerprint_label)

        self.details_label = QLabel(HostKeyDialog)
        self.details_label.setObjectName(u"details_label")
        self.details_label.setWordWrap(True)
        self.details_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.dialog_layout.addWidget(self.details_label)

        self.advice_label = QLabel(HostKeyDialog)
        self.advice_label.setObjectName(u"advice_label")
        self.advice_label.setWordWrap(True)
        self.advice_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.dialog_layout.addWidget(self.advice_label)

        self.buttons_layout = QHBoxLayout()
        self.buttons_layout.setObjectName(u"buttons_layout")
        self.reject_button = QPushButton(HostKeyDialog)
        self.reject_button.setObjectName(u"reject_button")
        self.reject_button.setAutoDefault(True)

        self.buttons_layout.addWidget(self.reject_button)

        self.buttons_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.buttons_layout.addItem(self.buttons_spacer)

        self.once_button = QPushButton(HostKeyDialog)
        self.once_button.setObjectName(u"once_button")
        self.once_button.setAutoDefault(False)

        self.buttons_layout.addWidget(self.once_button)

        self.remember_button = QPushButton(HostKeyDialog)
        self.remember_button.setObjectName(u"remember_button")
        self.remember_button.setAutoDefault(False)

        self.buttons_layout.addWidget(self.remember_button)


        self.dialog_layout.addLayout(self.buttons_layout)


        self.retranslateUi(HostKeyDialog)

        self.reject_button.setDefault(True)


        QMetaObject.connectSlotsByName(HostKeyDialog)
    # setupUi

    def retranslateUi(self, HostKeyDialog):
        HostKeyDialog.setWindowTitle(QCoreApplication.translate("HostKeyDialog", u"Unknown host key", None))
        self.intro_label.setText("")
#if QT_CONFIG(accessibility)
        self.intro_label.setAccessibleName(QCoreApplication.translate("HostKeyDialog", u"Question", None))
#endif // QT_CONFIG(accessibility)
        self.fingerprint_caption.setText(QCoreApplication.translate("HostKeyDialog", u"Fingerprint:", None))
        self.fingerprint_label.setText("")
#if QT_CONFIG(accessibility)
        self.fingerprint_label.setAccessibleName(QCoreApplication.translate("HostKeyDialog", u"Host key fingerprint", None))
#endif // QT_CONFIG(accessibility)
        self.details_label.setText("")
#if QT_CONFIG(accessibility)
        self.details_label.setAccessibleName(QCoreApplication.translate("HostKeyDialog", u"Key details", None))
#endif // QT_CONFIG(accessibility)
        self.advice_label.setText("")
#if QT_CONFIG(accessibility)
        self.advice_label.setAccessibleName(QCoreApplication.translate("HostKeyDialog", u"Advice", None))
#endif // QT_CONFIG(accessibility)
        self.reject_button.setText(QCoreApplication.translate("HostKeyDialog", u"&Reject", None))
#if QT_CONFIG(accessibility)
        self.reject_button.setAccessibleName(QCoreApplication.translate("HostKeyDialog", u"Reject host key", None))
#endif // QT_CONFIG(accessibility)
        self.once_button.setText(QCoreApplication.translate("HostKeyDialog", u"Accept &once", None))
#if QT_CONFIG(accessibility)
        self.once_button.setAccessibleName(QCoreApplication.translate("HostKeyDialog", u"Accept host key once", None))
#endif // QT_CONFIG(accessibility)
        self.remember_button.setText(QCoreApplication.translate("HostKeyDialog", u"&Accept and remember", None))
#if QT_CONFIG(accessibility)
        self.remember_button.setAccessibleName(QCoreApplication.translate("HostKeyDialog", u"Accept and remember host key", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

