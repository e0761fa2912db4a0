from app_pages.navigation import LESSONS_PAGE, TOOLS, all_pages
from tests.app.apptest import code_blocks, assert_clean, open_page, shown_text


def test_home_opens_without_exception_and_links_every_tool():
    at = open_page()
    assert_clean(at)
    assert "PyTorch Workbench" in shown_text(at)
    linked = {link.proto.page for link in at.get("page_link")}  # url paths of the targets
    assert linked == {t.url_path for t in TOOLS} | {LESSONS_PAGE.url_path}


def test_every_page_opens_through_the_router_without_exception():
    for tool in all_pages():
        at = open_page(tool.script)
        assert_clean(at, tool.script)
        assert not at.get("error") or all("unexpected" not in e.value for e in at.error), tool.script


def test_home_diagnostics_are_torchs_own():
    import torch

    at = open_page()
    table = at.table[0].value
    rows = dict(zip(table["check"].str.strip("`"), table["value"], strict=True))
    assert rows["torch.__version__"] == torch.__version__
    assert rows["torch.cuda.is_available()"] == str(torch.cuda.is_available())
    assert rows["torch.get_num_threads()"] == "1"
    assert rows["device selected"] in {"cpu", "cuda", "mps"}


def test_sidebar_shows_the_device():
    # AppTest drops sidebar elements after switch_page; the e2e tests check every page.
    at = open_page()
    assert any("Device:" in str(getattr(e, "value", "")) for e in at.sidebar)


def test_knowledge_check_reveals_pytorchs_answer_only_after_commit():
    at = open_page()
    assert "Expected all tensors" not in shown_text(at)
    at.radio(key="kc_home_device_mismatch_choice").set_value("PyTorch raises an error").run()
    at.button(key="kc_home_device_mismatch_commit").click().run()
    assert_clean(at)
    assert any("Right" in s.value for s in at.success)
    code = "\n".join(c for c in code_blocks(at))
    assert "device" in code.lower()
