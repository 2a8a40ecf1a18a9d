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



def _recording_app(cls: type) -> tuple[object, list[str]]:
    """An app of ``cls`` with hooks on itself, a blueprint and a nested one, each recording."""
    from flask import Blueprint, Flask, after_this_request

    assert issubclass(cls, Flask)
    seen: list[str] = []
    app = cls(__name__)
    outer, inner = Blueprint("outer", __name__), Blueprint("inner", __name__)

    def hooks(owner: object, name: str) -> None:
        for n in (1, 2):
            owner.url_value_preprocessor(  # type: ignore[attr-defined]
                lambda endpoint, values, n=n: seen.append(f"url {name}{n} {endpoint}"))
            owner.before_request(lambda n=n: seen.append(f"before {name}{n}"))  # type: ignore[attr-defined]

            def after(response, n=n):  # type: ignore[no-untyped-def]
                seen.append(f"after {name}{n}")
                response.headers.add("X-Order", f"{name}{n}")
                return response

            owner.after_request(after)  # type: ignore[attr-defined]
            owner.teardown_request(  # type: ignore[attr-defined]
                lambda exc, n=n: seen.append(f"teardown {name}{n} {type(exc).__name__}"))

    hooks(app, "app")
    hooks(outer, "outer")
    hooks(inner, "inner")

    @inner.route("/deep")
    def deep() -> str:
        @after_this_request
        def own(response):  # type: ignore[no-untyped-def]
            seen.append("after this request")
            return response

        seen.append("view")
        return "deep"

    @inner.route("/stop")
    def stop() -> str:
        return "not reached"

    @inner.before_request
    def stopper():  # type: ignore[no-untyped-def]
        from flask import request

        return "stopped" if request.path == "/outer/inner/stop" else None

    @app.route("/top")
    def top() -> str:
        seen.append("view")
        return "top"

    outer.register_blueprint(inner, url_prefix="/inner")
    app.register_blueprint(outer, url_prefix="/outer")
    return app, seen


def test_hooks_run_in_flasks_order_with_flasks_arguments():
    from flask import Flask

    from app import App

    runs = {}
    for cls in (Flask, App):
        app, seen = _recording_app(cls)
        client = app.test_client()  # type: ignore[attr-defined]
        answers = []
        for _ in range(2):  # the second request runs the kept order
            for path in ("/outer/inner/deep", "/top", "/outer/inner/stop", "/missing"):
                response = client.get(path)
                answers.append((path, response.status_code, response.get_data(as_text=True),
                                response.headers.getlist("X-Order")))
        runs[cls.__name__] = (seen, answers)
    assert runs["App"] == runs["Flask"]
    seen = runs["App"][0]
    # what the comparison covers: every kind of hook, at both levels, ran
    assert "url inner2 outer.inner.deep" in seen and "teardown outer1 NoneType" in seen
    assert "after this request" in seen
