# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'done_page.ui'
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
from PySide6.QtWidgets import (QApplication, QFormLayout, QFrame, QHBoxLayout,
    QLabel, QPushButton, QSizePolicy, QSpacerItem,
    QVBoxLayout, QWidget, QWizardPage)

class Ui_DonePage(object):
    def setupUi(self, DonePage):
        if not DonePage.objectName():
            DonePage.setObjectName(u"DonePage")
        self.page_layout = QVBoxLayout(DonePage)
        self.page_layout.setSpacing(10)
        self.page_layout.setObjectName(u"page_layout")
        self.result_frame = QFrame(DonePage)
        self.result_frame.setObjectName(u"result_frame")
        self.result_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.result_layout = QVBoxLayout(self.result_frame)
        self.result_layout.setObjectName(u"result_layout")
        self.result_layout.setContentsMargins(14, 10, 14, 10)
        self.result_label = QLabel(self.result_frame)
        self.result_label.setObjectName(u"result_label")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.result_layout.addWidget(self.result_label)

        self.reason_label = QLabel(self.result_frame)
        self.reason_label.setObjectName(u"reason_label")
        self.reason_label.setWordWrap(True)
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.result_layout.addWidget(self.reason_label)


        self.page_layout.addWidget(self.result_frame)

        self.verdict_frame = QFrame(DonePage)
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

        self.datasets_label = QLabel(DonePage)
        self.datasets_label.setObjectName(u"datasets_label")
        self.datasets_label.setTextFormat(Qt.RichText)
        self.datasets_label.setWordWrap(True)
        self.datasets_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.datasets_label)

        self.facts_layout = QFormLayout()
        self.facts_layout.setObjectName(u"facts_layout")
        self.facts_layout.setHorizontalSpacing(14)
        self.facts_layout.setVerticalSpacing(4)
        self.bytes_caption = QLabel(DonePage)
        self.bytes_caption.setObjectName(u"bytes_caption")

        self.facts_layout.setWidget(0, QFormLayout.ItemRole.LabelRole, self.bytes_caption)

        self.bytes_value = QLabel(DonePage)
        self.bytes_value.setObjectName(u"bytes_value")
        self.bytes_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.facts_layout.setWidget(0, QFormLayout.ItemRole.FieldRole, self.bytes_value)

        self.duration_caption = QLabel(DonePage)
        self.duration_caption.setObjectName(u"duration_caption")

        self.facts_layout.setWidget(1, QFormLayout.ItemRole.LabelRole, self.duration_caption)

        self.duration_value = QLabel(DonePage)
        self.duration_value.setObjectName(u"duration_value")
        self.duration_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.facts_layout.setWidget(1, QFormLayout.ItemRole.FieldRole, self.duration_value)

        self.rate_caption = QLabel(DonePage)
        self.rate_caption.setObjectName(u"rate_caption")

        self.facts_layout.setWidget(2, QFormLayout.ItemRole.LabelRole, self.rate_caption)

        self.rate_value = QLabel(DonePage)
        self.rate_value.setObjectName(u"rate_value")
        self.rate_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.facts_layout.setWidget(2, QFormLayout.ItemRole.FieldRole, self.rate_value)

        self.snapshots_caption = QLabel(DonePage)
        self.snapshots_caption.setObjectName(u"snapshots_caption")

        self.facts_layout.setWidget(3, QFormLayout.ItemRole.LabelRole, self.snapshots_caption)

        self.snapshots_value = QLabel(DonePage)
        self.snapshots_value.setObjectName(u"snapshots_value")
        self.snapshots_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.facts_layout.setWidget(3, QFormLayout.ItemRole.FieldRole, self.snapshots_value)

        self.check_caption = QLabel(DonePage)
        self.check_caption.setObjectName(u"check_caption")

        self.facts_layout.setWidget(4, QFormLayout.ItemRole.LabelRole, self.check_caption)

        self.check_value = QLabel(DonePage)
        self.check_value.setObjectName(u"check_value")
        self.check_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.facts_layout.setWidget(4, QFormLayout.ItemRole.FieldRole, self.check_value)


        self.page_layout.addLayout(self.facts_layout)

        self.plot_host = QWidget(DonePage)
        self.plot_host.setObjectName(u"plot_host")
        self.plot_host.setMinimumSize(QSize(0, 200))

        self.page_layout.addWidget(self.plot_host)

        self.buttons_layout = QHBoxLayout()
        self.buttons_layout.setObjectName(u"buttons_layout")
        self.save_png_button = QPushButton(DonePage)
        self.save_png_button.setObjectName(u"save_png_button")

        self.buttons_layout.addWidget(self.save_png_button)

        self.export_csv_button = QPushButton(DonePage)
        self.export_csv_button.setObjectName(u"export_csv_button")

        self.buttons_layout.addWidget(self.export_csv_button)

        self.history_button = QPushButton(DonePage)
        self.history_button.setObjectName(u"history_button")

        self.buttons_layout.addWidget(self.history_button)

        self.buttons_spacer = QSpacerItem(20, 20, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.buttons_layout.addItem(self.buttons_spacer)

        self.sync_again_button = QPushButton(DonePage)
        self.sync_again_button.setObjectName(u"sync_again_button")

        self.buttons_layout.addWidget(self.sync_again_button)

        self.keep_sync_button = QPushButton(DonePage)
        self.keep_sync_button.setObjectName(u"keep_sync_button")

        self.buttons_layout.addWidget(self.keep_sync_button)

        self.final_sync_button = QPushButton(DonePage)
        self.final_sync_button.setObjectName(u"final_sync_button")

        self.buttons_layout.addWidget(self.final_sync_button)

        self.go_live_button = QPushButton(DonePage)
        self.go_live_button.setObjectName(u"go_live_button")

        self.buttons_layout.addWidget(self.go_live_button)

        self.go_back_button = QPushButton(DonePage)
        self.go_back_button.setObjectName(u"go_back_button")

        self.buttons_layout.addWidget(self.go_back_button)

        self.again_button = QPushButton(DonePage)
        self.again_button.setObjectName(u"again_button")

        self.buttons_layout.addWidget(self.again_button)


        self.page_layout.addLayout(self.buttons_layout)

        self.go_live_label = QLabel(DonePage)
        self.go_live_label.setObjectName(u"go_live_label")
        self.go_live_label.setTextFormat(Qt.RichText)
        self.go_live_label.setWordWrap(True)

        self.page_layout.addWidget(self.go_live_label)

        self.saved_label = QLabel(DonePage)
        self.saved_label.setObjectName(u"saved_label")
        self.saved_label.setTextFormat(Qt.RichText)
        self.saved_label.setWordWrap(True)
        self.saved_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_layout.addWidget(self.saved_label)

        self.page_layout.setStretch(4, 1)

        self.retranslateUi(DonePage)

        QMetaObject.connectSlotsByName(DonePage)
    # setupUi

    def retranslateUi(self, DonePage):
        DonePage.setTitle(QCoreApplication.translate("DonePage", u"Done", None))
        DonePage.setSubTitle(QCoreApplication.translate("DonePage", u"How the transfer went.", None))
        self.result_label.setText("")
#if QT_CONFIG(accessibility)
        self.result_label.setAccessibleName(QCoreApplication.translate("DonePage", u"Result", None))
#endif // QT_CONFIG(accessibility)
        self.reason_label.setText("")
#if QT_CONFIG(accessibility)
        self.reason_label.setAccessibleName(QCoreApplication.translate("DonePage", u"Why", None))
#endif // QT_CONFIG(accessibility)
        self.verdict_label.setText("")
#if QT_CONFIG(accessibility)
        self.verdict_label.setAccessibleName(QCoreApplication.translate("DonePage", u"Bottleneck verdict", None))
#endif // QT_CONFIG(accessibility)
        self.datasets_label.setText("")
#if QT_CONFIG(accessibility)
        self.datasets_label.setAccessibleName(QCoreApplication.translate("DonePage", u"Each dataset of the tree and its checks", None))
#endif // QT_CONFIG(accessibility)
        self.bytes_caption.setText(QCoreApplication.translate("DonePage", u"Sent:", None))
        self.bytes_value.setText("")
#if QT_CONFIG(accessibility)
        self.bytes_value.setAccessibleName(QCoreApplication.translate("DonePage", u"Sent", None))
#endif // QT_CONFIG(accessibility)
        self.duration_caption.setText(QCoreApplication.translate("DonePage", u"Duration:", None))
        self.duration_value.setText("")
#if QT_CONFIG(accessibility)
        self.duration_value.setAccessibleName(QCoreApplication.translate("DonePage", u"Duration", None))
#endif // QT_CONFIG(accessibility)
        self.rate_caption.setText(QCoreApplication.translate("DonePage", u"Average rate:", None))
        self.rate_value.setText("")
#if QT_CONFIG(accessibility)
        self.rate_value.setAccessibleName(QCoreApplication.translate("DonePage", u"Average rate", None))
#endif // QT_CONFIG(accessibility)
        self.snapshots_caption.setText(QCoreApplication.translate("DonePage", u"Snapshots:", None))
        self.snapshots_value.setText("")
#if QT_CONFIG(accessibility)
        self.snapshots_value.setAccessibleName(QCoreApplication.translate("DonePage", u"Snapshots", None))
#endif // QT_CONFIG(accessibility)
        self.check_caption.setText(QCoreApplication.translate("DonePage", u"Check:", None))
        self.check_value.setText("")
#if QT_CONFIG(accessibility)
        self.check_value.setAccessibleName(QCoreApplication.translate("DonePage", u"Check", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.plot_host.setAccessibleName(QCoreApplication.translate("DonePage", u"Rates and buffer fill plot", None))
#endif // QT_CONFIG(accessibility)
        self.save_png_button.setText(QCoreApplication.translate("DonePage", u"Save plot as &PNG\u2026", None))
#if QT_CONFIG(accessibility)
        self.save_png_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Save plot as PNG", None))
#endif // QT_CONFIG(accessibility)
        self.export_csv_button.setText(QCoreApplication.translate("DonePage", u"Export samples as &CSV\u2026", None))
#if QT_CONFIG(accessibility)
        self.export_csv_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Export samples as CSV", None))
#endif // QT_CONFIG(accessibility)
        self.history_button.setText(QCoreApplication.translate("DonePage", u"&History\u2026", None))
#if QT_CONFIG(accessibility)
        self.history_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Transfer history", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.history_button.setToolTip(QCoreApplication.translate("DonePage", u"Every transfer so far; compare this one with an earlier one", None))
#endif // QT_CONFIG(tooltip)
        self.sync_again_button.setText(QCoreApplication.translate("DonePage", u"S&ync again", None))
#if QT_CONFIG(accessibility)
        self.sync_again_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Sync the same tree again", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.sync_again_button.setToolTip(QCoreApplication.translate("DonePage", u"Send only what changed since this copy (a new snapshot, then each dataset's delta)", None))
#endif // QT_CONFIG(tooltip)
        self.keep_sync_button.setText(QCoreApplication.translate("DonePage", u"&Keep in sync\u2026", None))
#if QT_CONFIG(accessibility)
        self.keep_sync_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Keep in sync", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.keep_sync_button.setToolTip(QCoreApplication.translate("DonePage", u"Repeat the catch-up every interval, unattended (the copy stays close to the source and the final sync's read-only window small), until Final sync", None))
#endif // QT_CONFIG(tooltip)
        self.final_sync_button.setText(QCoreApplication.translate("DonePage", u"&Final sync", None))
#if QT_CONFIG(accessibility)
        self.final_sync_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Final sync", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.final_sync_button.setToolTip(QCoreApplication.translate("DonePage", u"Set the source datasets read-only, then send the last delta: the copy is exactly the source", None))
#endif // QT_CONFIG(tooltip)
        self.go_live_button.setText(QCoreApplication.translate("DonePage", u"Go &live", None))
#if QT_CONFIG(accessibility)
        self.go_live_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Go live", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.go_live_button.setToolTip(QCoreApplication.translate("DonePage", u"Bring the copy into service: read-only off, mounted where the source was (the source's datasets unmounted first when both are on this host). Every command is shown before it runs.", None))
#endif // QT_CONFIG(tooltip)
        self.go_back_button.setText(QCoreApplication.translate("DonePage", u"Go &back", None))
#if QT_CONFIG(accessibility)
        self.go_back_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Go back", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(tooltip)
        self.go_back_button.setToolTip(QCoreApplication.translate("DonePage", u"Undo what Go live did: the copy unmounted and read-only again, the source mounted as before", None))
#endif // QT_CONFIG(tooltip)
        self.again_button.setText(QCoreApplication.translate("DonePage", u"&Start another transfer", None))
#if QT_CONFIG(accessibility)
        self.again_button.setAccessibleName(QCoreApplication.translate("DonePage", u"Start another transfer", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.go_live_label.setAccessibleName(QCoreApplication.translate("DonePage", u"What going live did", None))
#endif // QT_CONFIG(accessibility)
        self.saved_label.setText("")
#if QT_CONFIG(accessibility)
        self.saved_label.setAccessibleName(QCoreApplication.translate("DonePage", u"Saved files", None))
#endif // QT_CONFIG(accessibility)
    # retranslateUi

