# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'transfer_page.ui'
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
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QFrame, QHBoxLayout,
    QHeaderView, QLabel, QPlainTextEdit, QProgressBar,
    QPushButton, QSizePolicy, QSpacerItem, QTableView,
    QToolButton, QVBoxLayout, QWidget, QWizardPage)

class Ui_TransferPage(object):
    def setupUi(self, TransferPage):
        if not TransferPage.objectName():
            TransferPage.setObjectName(u"TransferPage")
        self.page_layout = QVBoxLayout(TransferPage)
        self.page_layout.setSpacing(6)
        self.page_layout.setObjectName(u"page_layout")
        self.verdict_frame = QFrame(TransferPage)
        self.verdict_frame.setObjectName(u"verdict_frame")
        self.verdict_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.verdict_layout = QVBoxLayout(self.verdict_frame)
        self.verdict_layout.setObjectName(u"verdict_layout")
        self.verdict_label = QLabel(self.verdict_frame)
        self.verdict_label.setObjectName(u"verdict_label")
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.verdict_layout.addWidget(self.verdict_label)


        self.page_layout.addWidget(self.verdict_frame)

        self.stage_layout = QHBoxLayout()
        self.stage_layout.setObjectName(u"stage_layout")
        self.stage_label = QLabel(TransferPage)
        self.stage_label.setObjectName(u"stage_label")
        self.stage_label.setWordWrap(True)
        self.stage_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.stage_layout.addWidget(self.stage_label)

        self.stage_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.stage_layout.addItem(self.stage_spacer)

        self.stop_button = QPushButton(TransferPage)
        self.stop_button.setObjectName(u"stop_button")

        self.stage_layout.addWidget(self.stop_button)


        self.page_layout.addLayout(self.stage_layout)

        self.progress_bar = QProgressBar(TransferPage)
        self.progress_bar.setObjectName(u"progress_bar")
        self.progress_bar.setMaximum(1000)
        self.progress_bar.setTextVisible(False)

        self.page_layout.addWidget(self.progress_bar)

        self.progress_label = QLabel(TransferPage)
        self.progress_label.setObjectName(u"progress_label")
        self.progress_label.setWordWrap(True)

        self.page_layout.addWidget(self.progress_label)

        self.ends_label = QLabel(TransferPage)
        self.ends_label.setObjectName(u"ends_label")
        self.ends_label.setWordWrap(True)

        self.page_layout.addWidget(self.ends_label)

        self.datasets_view = QTableView(TransferPage)
        self.datasets_view.setObjectName(u"datasets_view")
        self.datasets_view.setAlternatingRowColors(True)
        self.datasets_view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.datasets_view.setMinimumSize(QSize(0, 90))

        self.page_layout.addWidget(self.datasets_view)

        self.rate_plot_host = QWidget(TransferPage)
        self.rate_plot_host.setObjectName(u"rate_plot_host")
        self.rate_plot_host.setMinimumSize(QSize(0, 160))

        self.page_layout.addWidget(self.rate_plot_host)

        self.fill_plot_host = QWidget(TransferPage)
        self.fill_plot_host.setObjectName(u"fill_plot_host")
        self.fill_plot_host.setMinimumSize(QSize(0, 110))

        self.page_layout.addWidget(self.fill_plot_host)

        self.log_header = QHBoxLayout()
        self.log_header.setObjectName(u"log_header")
        self.log_toggle = QToolButton(TransferPage)
        self.log_toggle.setObjectName(u"log_toggle")
        self.log_toggle.setCheckable(True)
        self.log_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.log_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.log_toggle.setAutoRaise(True)

        self.log_header.addWidget(self.log_toggle)

        self.log_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.log_header.addItem(self.log_spacer)


        self.page_layout.addLayout(self.log_header)

        self.log_edit = QPlainTextEdit(TransferPage)
        self.log_edit.setObjectName(u"log_edit")
        self.log_edit.setReadOnly(True)
        self.log_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)

        self.page_layout.addWidget(self.log_edit)

        self.page_layout.setStretch(5, 2)
        self.page_layout.setStretch(6, 3)
        self.page_layout.setStretch(7, 2)
        self.page_layout.setStretch(9, 2)

        self.retranslateUi(TransferPage)

        QMetaObject.connectSlotsByName(TransferPage)
    # setupUi

    def retranslateUi(self, TransferPage):
        TransferPage.setTitle(QCoreApplication.translate("TransferPage", u"Transfer", None))
        TransferPage.setSubTitle(QCoreApplication.translate("TransferPage", u"Live rates of the three stages and how full each buffer is.", None))
        self.verdict_label.setText("")
#if QT_CONFIG(accessibility)
        self.verdict_label.setAccessibleName(QCoreApplication.translate("TransferPage", u"Bottleneck verdict", None))
#endif // QT_CONFIG(accessibility)
        self.stage_label.setText("")
#if QT_CONFIG(accessibility)
        self.stage_label.setAccessibleName(QCoreApplication.translate("TransferPage", u"Stage", None))
#endif // QT_CONFIG(accessibility)
        self.stop_button.setText(QCoreApplication.translate("TransferPage", u"S&top transfer\u2026", None))
#if QT_CONFIG(accessibility)
        self.stop_button.setAccessibleName(QCoreApplication.translate("TransferPage", u"Stop transfer", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.progress_bar.setAccessibleName(QCoreApplication.translate("TransferPage", u"Transfer progress", None))
#endif // QT_CONFIG(accessibility)
        self.progress_label.setText("")
#if QT_CONFIG(accessibility)
        self.progress_label.setAccessibleName(QCoreApplication.translate("TransferPage", u"Bytes, rate and time left", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.ends_label.setAccessibleName(QCoreApplication.translate("TransferPage", u"The way between the buffers", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.ends_label.setToolTip(QCoreApplication.translate("TransferPage", u"As last read: the share of TCP segments the sending host sent again (a sound link stays well under 1%), and the CPU each end of the way got (near 100% of a CPU: that end's CPU sets the pace)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.datasets_view.setAccessibleName(QCoreApplication.translate("TransferPage", u"Datasets of the tree", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.datasets_view.setAccessibleDescription(QCoreApplication.translate("TransferPage", u"Each dataset's size, state and rate; the plots follow the one being sent", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.rate_plot_host.setAccessibleName(QCoreApplication.translate("TransferPage", u"Rates plot", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.fill_plot_host.setAccessibleName(QCoreApplication.translate("TransferPage", u"Buffer fill plot", None))
#endif // QT_CONFIG(accessibility)
        self.log_toggle.setText(QCoreApplication.translate("TransferPage", u"&Log from both hosts", None))
#if QT_CONFIG(accessibility)
        self.log_toggle.setAccessibleName(QCoreApplication.translate("TransferPage", u"Show log", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.log_edit.setAccessibleName(QCoreApplication.translate("TransferPage", u"Log", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.log_edit.setAccessibleDescription(QCoreApplication.translate("TransferPage", u"Messages both ends wrote to stderr", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

