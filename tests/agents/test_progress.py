"""The workbench's progress bar: its first estimate, and what it says while it stands still."""

from __future__ import annotations

import io

from dejavu_agents.progress import Progress


def test_the_bar_says_what_it_is_doing_while_it_stands_still() -> None:
    out = io.StringIO()
    bar = Progress(total=4, file=out, mininterval=0)
    bar.update(4)
    with bar.doing("evaluating at 4 steps"):
        assert "evaluating at 4 steps" in out.getvalue().split("\r")[-1]
    assert "evaluating" not in str(bar)
    bar.close()


def test_no_rate_is_shown_before_a_second_item_finishes() -> None:
    bar = Progress(total=10, file=io.StringIO(), mininterval=0)
    bar.update(1)
    assert bar.format_dict["rate"] is None
    bar.close()


def test_a_bar_made_under_a_live_bar_stays_off_so_a_log_keeps_one_bar() -> None:
    """A warm start's cloning bars inside a training run's bar: nested, each redraw of either was a garbled
    line in a log file; the inner one now stays off and the outer says what runs."""
    outer_out, inner_out = io.StringIO(), io.StringIO()
    outer = Progress(total=10, desc="train", file=outer_out, mininterval=0)
    with outer.doing("warm start: behaviour cloning"):
        inner = Progress(total=3, desc="record", file=inner_out, mininterval=0)
        inner.update(3)
        inner.close()
        assert inner.disable and inner_out.getvalue() == ""
        assert "warm start: behaviour cloning" in outer_out.getvalue().split("\r")[-1]
    outer.update(10)
    outer.close()
    after = Progress(total=1, file=io.StringIO(), mininterval=0)  # once the outer bar is closed, bars show again
    assert not after.disable and Progress.live() is after
    after.close()
    assert Progress.live() is None


def test_a_disabled_bar_leaves_the_next_one_on() -> None:
    hidden = Progress(total=2, disable=True)
    shown = Progress(total=2, file=io.StringIO(), mininterval=0)
    assert not shown.disable
    shown.close()
    hidden.close()
