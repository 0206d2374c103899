"""Cut over: the final sync's read-only window (`readonly_window`, `final_sync`), going live and
back (`cutover`, `checks`) and their record (`record`)."""

from .cutover import GoLivePlan, Prop, Props, Step, parse_props, plan_go_live

__all__ = ["GoLivePlan", "Prop", "Props", "Step", "parse_props", "plan_go_live"]
