"""app.App: Flask with each function's sync-or-async kind read once."""

from __future__ import annotations


def test_plain_functions_and_methods_run_as_they_are(app):
    def hook() -> None:
        return None

    class View:
        def get(self) -> None:
            return None

    view = View()
    assert app.ensure_sync(hook) is hook
    assert app.ensure_sync(hook) is hook  # the second answer comes from the kept kind
    assert app.ensure_sync(view.get) == view.get


def test_async_functions_still_go_through_flasks_wrapper(app):
    async def hook() -> None:
        return None

    for _ in range(2):  # the kind is kept: the second call must not return it bare either
        try:
            wrapped = app.ensure_sync(hook)
        except RuntimeError as err:  # Flask without its async extra says so
            assert "async" in str(err)
            continue
        assert wrapped is not hook

