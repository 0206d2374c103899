# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'compare_view.ui'
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
from PySide6.QtWidgets import (QApplication, QLabel, QSizePolicy, QVBoxLayout,
    QWidget)

class Ui_CompareView(object):
    def setupUi(self, CompareView):
        if not CompareView.objectName():
            CompareView.setObjectName(u"CompareView")
        self.view_layout = QVBoxLayout(CompareView)
        self.view_layout.setSpacing(2)
        self.view_layout.setObjectName(u"view_layout")
        self.view_layout.setContentsMargins(0, 0, 0, 0)
        self.title_label = QLabel(CompareView)
        self.title_label.setObjectName(u"title_label")
        self.title_label.setWordWrap(True)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.view_layout.addWidget(self.title_label)

        self.rate_plot_host = QWidget(CompareView)
        self.rate_plot_host.setObjectName(u"rate_plot_host")

        self.view_layout.addWidget(self.rate_plot_host)

        self.fill_plot_host = QWidget(CompareView)
        self.fill_plot_host.setObjectName(u"fill_plot_host")

        self.view_layout.addWidget(self.fill_plot_host)

        self.numbers_label = QLabel(CompareView)
        self.numbers_label.setObjectName(u"numbers_label")
        self.numbers_label.setWordWrap(True)
        self.numbers_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.view_layout.addWidget(self.numbers_label)

        self.view_layout.setStretch(1, 3)
        self.view_layout.setStretch(2, 2)

        self.retranslateUi(CompareView)

        QMetaObject.connectSlotsByName(CompareView)
    # setupUi

    def retranslateUi(self, CompareView):
        self.title_label.setText("")
#if QT_CONFIG(accessibility)
        self.title_label.setAccessibleName(QCoreApplication.translate("CompareView", u"Compared jobs", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.rate_plot_host.setAccessibleName(QCoreApplication.translate("CompareView", u"Receive rates of both jobs", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.fill_plot_host.setAccessibleName(QCoreApplication.translate("CompareView", u"Receiver buffer fill of both jobs", None))
#endif // QT_CONFIG(accessibility)
        self.numbers_label.setText("")
#if QT_CONFIG(accessibility)
        self.numbers_label.setAccessibleName(QCoreApplication.translate("CompareView", u"Both jobs in numbers", None))
#endif // QT_CONFIG(accessibility)
        pass
    # retranslateUi

