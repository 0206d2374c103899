# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'job_view.ui'
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
from PySide6.QtWidgets import (QApplication, QLabel, QPlainTextEdit, QSizePolicy,
    QTabWidget, QVBoxLayout, QWidget)

class Ui_JobView(object):
    def setupUi(self, JobView):
        if not JobView.objectName():
            JobView.setObjectName(u"JobView")
        self.view_layout = QVBoxLayout(JobView)
        self.view_layout.setObjectName(u"view_layout")
        self.view_layout.setContentsMargins(0, 0, 0, 0)
        self.title_label = QLabel(JobView)
        self.title_label.setObjectName(u"title_label")
        self.title_label.setWordWrap(True)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.view_layout.addWidget(self.title_label)

        self.tabs = QTabWidget(JobView)
        self.tabs.setObjectName(u"tabs")
        self.plots_tab = QWidget()
        self.plots_tab.setObjectName(u"plots_tab")
        self.plots_layout = QVBoxLayout(self.plots_tab)
        self.plots_layout.setSpacing(2)
        self.plots_layout.setObjectName(u"plots_layout")
        self.rate_plot_host = QWidget(self.plots_tab)
        self.rate_plot_host.setObjectName(u"rate_plot_host")

        self.plots_layout.addWidget(self.rate_plot_host)

        self.fill_plot_host = QWidget(self.plots_tab)
        self.fill_plot_host.setObjectName(u"fill_plot_host")

        self.plots_layout.addWidget(self.fill_plot_host)

        self.plots_layout.setStretch(0, 3)
        self.plots_layout.setStretch(1, 2)
        self.tabs.addTab(self.plots_tab, "")
        self.details_tab = QWidget()
        self.details_tab.setObjectName(u"details_tab")
        self.details_layout = QVBoxLayout(self.details_tab)
        self.details_layout.setObjectName(u"details_layout")
        self.facts_label = QLabel(self.details_tab)
        self.facts_label.setObjectName(u"facts_label")
        self.facts_label.setWordWrap(True)
        self.facts_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.details_layout.addWidget(self.facts_label)

        self.error_label = QLabel(self.details_tab)
        self.error_label.setObjectName(u"error_label")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.details_layout.addWidget(self.error_label)

        self.commands_label = QLabel(self.details_tab)
        self.commands_label.setObjectName(u"commands_label")

        self.details_layout.addWidget(self.commands_label)

        self.commands_edit = QPlainTextEdit(self.details_tab)
        self.commands_edit.setObjectName(u"commands_edit")
        self.commands_edit.setReadOnly(True)

        self.details_layout.addWidget(self.commands_edit)

        self.tabs.addTab(self.details_tab, "")

        self.view_layout.addWidget(self.tabs)

#if QT_CONFIG(shortcut)
        self.commands_label.setBuddy(self.commands_edit)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(JobView)

        self.tabs.setCurrentIndex(0)


        QMetaObject.connectSlotsByName(JobView)
    # setupUi

    def retranslateUi(self, JobView):
        self.title_label.setText("")
#if QT_CONFIG(accessibility)
        self.title_label.setAccessibleName(QCoreApplication.translate("JobView", u"Job", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.tabs.setAccessibleName(QCoreApplication.translate("JobView", u"Job plots and details", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.rate_plot_host.setAccessibleName(QCoreApplication.translate("JobView", u"Stored rates", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.fill_plot_host.setAccessibleName(QCoreApplication.translate("JobView", u"Stored buffer fill", None))
#endif // QT_CONFIG(accessibility)
        self.tabs.setTabText(self.tabs.indexOf(self.plots_tab), QCoreApplication.translate("JobView", u"&Plots", None))
        self.facts_label.setText("")
#if QT_CONFIG(accessibility)
        self.facts_label.setAccessibleName(QCoreApplication.translate("JobView", u"Job facts", None))
#endif // QT_CONFIG(accessibility)
        self.error_label.setText("")
#if QT_CONFIG(accessibility)
        self.error_label.setAccessibleName(QCoreApplication.translate("JobView", u"Job error", None))
#endif // QT_CONFIG(accessibility)
        self.commands_label.setText(QCoreApplication.translate("JobView", u"Commands &run:", None))
#if QT_CONFIG(accessibility)
        self.commands_edit.setAccessibleName(QCoreApplication.translate("JobView", u"Commands the job ran on each host", None))
#endif // QT_CONFIG(accessibility)
        self.tabs.setTabText(self.tabs.indexOf(self.details_tab), QCoreApplication.translate("JobView", u"&Details", None))
        pass
    # retranslateUi

