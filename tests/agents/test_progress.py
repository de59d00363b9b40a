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
