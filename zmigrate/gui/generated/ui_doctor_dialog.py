# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'doctor_dialog.ui'
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
from PySide6.QtWidgets import (QApplication, QCheckBox, QDialog, QFormLayout,
    QFrame, QHBoxLayout, QLabel, QPushButton,
    QScrollArea, QSizePolicy, QSpacerItem, QSpinBox,
    QVBoxLayout, QWidget)

class Ui_DoctorDialog(object):
    def setupUi(self, DoctorDialog):
        if not DoctorDialog.objectName():
            DoctorDialog.setObjectName(u"DoctorDialog")
        self.dialog_layout = QVBoxLayout(DoctorDialog)
        self.dialog_layout.setSpacing(8)
        self.dialog_layout.setObjectName(u"dialog_layout")
        self.intro_label = QLabel(DoctorDialog)
        self.intro_label.setObjectName(u"intro_label")
        self.intro_label.setWordWrap(True)

        self.dialog_layout.addWidget(self.intro_label)

        self.options_layout = QFormLayout()
        self.options_layout.setObjectName(u"options_layout")
        self.seconds_label = QLabel(DoctorDialog)
        self.seconds_label.setObjectName(u"seconds_label")

        self.options_layout.setWidget(0, QFormLayout.ItemRole.LabelRole, self.seconds_label)

        self.seconds_spin = QSpinBox(DoctorDialog)
        self.seconds_spin.setObjectName(u"seconds_spin")
        self.seconds_spin.setMinimum(1)
        self.seconds_spin.setMaximum(120)
        self.seconds_spin.setValue(10)

        self.options_layout.setWidget(0, QFormLayout.ItemRole.FieldRole, self.seconds_spin)

        self.write_check = QCheckBox(DoctorDialog)
        self.write_check.setObjectName(u"write_check")

        self.options_layout.setWidget(1, QFormLayout.ItemRole.FieldRole, self.write_check)

        self.write_warning = QLabel(DoctorDialog)
        self.write_warning.setObjectName(u"write_warning")
        self.write_warning.setWordWrap(True)

        self.options_layout.setWidget(2, QFormLayout.ItemRole.FieldRole, self.write_warning)


        self.dialog_layout.addLayout(self.options_layout)

        self.status_label = QLabel(DoctorDialog)
        self.status_label.setObjectName(u"status_label")
        self.status_label.setWordWrap(True)

        self.dialog_layout.addWidget(self.status_label)

        self.chart_host = QWidget(DoctorDialog)
        self.chart_host.setObjectName(u"chart_host")
        self.chart_host.setMinimumSize(QSize(0, 230))

        self.dialog_layout.addWidget(self.chart_host)

        self.report_scroll = QScrollArea(DoctorDialog)
        self.report_scroll.setObjectName(u"report_scroll")
        self.report_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.report_scroll.setWidgetResizable(True)
        self.report_widget = QWidget()
        self.report_widget.setObjectName(u"report_widget")
        self.report_layout = QVBoxLayout(self.report_widget)
        self.report_layout.setObjectName(u"report_layout")
        self.report_layout.setContentsMargins(0, 0, 0, 0)
        self.expected_label = QLabel(self.report_widget)
        self.expected_label.setObjectName(u"expected_label")
        self.expected_label.setWordWrap(True)
        self.expected_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.report_layout.addWidget(self.expected_label)

        self.cpu_label = QLabel(self.report_widget)
        self.cpu_label.setObjectName(u"cpu_label")
        self.cpu_label.setWordWrap(True)
        self.cpu_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.report_layout.addWidget(self.cpu_label)

        self.advice_label = QLabel(self.report_widget)
        self.advice_label.setObjectName(u"advice_label")
        self.advice_label.setWordWrap(True)
        self.advice_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.report_layout.addWidget(self.advice_label)

        self.report_spacer = QSpacerItem(20, 0, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Expanding)

        self.report_layout.addItem(self.report_spacer)

        self.report_scroll.setWidget(self.report_widget)

        self.dialog_layout.addWidget(self.report_scroll)

        self.buttons_layout = QHBoxLayout()
        self.buttons_layout.setObjectName(u"buttons_layout")
        self.buffer_button = QPushButton(DoctorDialog)
        self.buffer_button.setObjectName(u"buffer_button")

        self.buttons_layout.addWidget(self.buffer_button)

        self.buttons_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.buttons_layout.addItem(self.buttons_spacer)

        self.run_button = QPushButton(DoctorDialog)
        self.run_button.setObjectName(u"run_button")

        self.buttons_layout.addWidget(self.run_button)

        self.cancel_button = QPushButton(DoctorDialog)
        self.cancel_button.setObjectName(u"cancel_button")

        self.buttons_layout.addWidget(self.cancel_button)

        self.close_button = QPushButton(DoctorDialog)
        self.close_button.setObjectName(u"close_button")

        self.buttons_layout.addWidget(self.close_button)


        self.dialog_layout.addLayout(self.buttons_layout)

        self.dialog_layout.setStretch(3, 1)
        self.dialog_layout.setStretch(4, 1)
#if QT_CONFIG(shortcut)
        self.seconds_label.setBuddy(self.seconds_spin)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(DoctorDialog)

        QMetaObject.connectSlotsByName(DoctorDialog)
    # setupUi

    def retranslateUi(self, DoctorDialog):
        DoctorDialog.setWindowTitle(QCoreApplication.translate("DoctorDialog", u"zmigrate: doctor", None))
        self.intro_label.setText("")
        self.seconds_label.setText(QCoreApplication.translate("DoctorDialog", u"&Each stage runs:", None))
        self.seconds_spin.setSuffix(QCoreApplication.translate("DoctorDialog", u" s", None))
#if QT_CONFIG(accessibility)
        self.seconds_spin.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Seconds per stage", None))
#endif // QT_CONFIG(accessibility)
        self.write_check.setText(QCoreApplication.translate("DoctorDialog", u"Also test &writing on the destination", None))
#if QT_CONFIG(accessibility)
        self.write_check.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Also test writing on the destination", None))
#endif // QT_CONFIG(accessibility)
        self.write_warning.setText("")
        self.status_label.setText("")
#if QT_CONFIG(accessibility)
        self.status_label.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Doctor status", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.chart_host.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Stage rates", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.report_scroll.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Doctor report", None))
#endif // QT_CONFIG(accessibility)
        self.expected_label.setText("")
#if QT_CONFIG(accessibility)
        self.expected_label.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Expected end-to-end rate", None))
#endif // QT_CONFIG(accessibility)
        self.cpu_label.setText("")
#if QT_CONFIG(accessibility)
        self.cpu_label.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"CPU notes", None))
#endif // QT_CONFIG(accessibility)
        self.advice_label.setText("")
#if QT_CONFIG(accessibility)
        self.advice_label.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Advice", None))
#endif // QT_CONFIG(accessibility)
        self.buffer_button.setText(QCoreApplication.translate("DoctorDialog", u"Use a &5 s buffer", None))
#if QT_CONFIG(accessibility)
        self.buffer_button.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Use a buffer of five seconds at the expected rate", None))
#endif // QT_CONFIG(accessibility)
        self.run_button.setText(QCoreApplication.translate("DoctorDialog", u"&Run", None))
#if QT_CONFIG(accessibility)
        self.run_button.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Run the doctor", None))
#endif // QT_CONFIG(accessibility)
        self.cancel_button.setText(QCoreApplication.translate("DoctorDialog", u"&Cancel", None))
#if QT_CONFIG(accessibility)
        self.cancel_button.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Stop the doctor", None))
#endif // QT_CONFIG(accessibility)
        self.close_button.setText(QCoreApplication.translate("DoctorDialog", u"C&lose", None))
#if QT_CONFIG(accessibility)
        self.close_button.setAccessibleName(QCoreApplication.translate("DoctorDialog", u"Close the doctor", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

