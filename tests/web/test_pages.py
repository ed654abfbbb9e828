"""The players' pages through Flask's test client: a real controller over a real SQLite store.

The table here has no camera (captures fail and say so), so the dice are entered by hand, which
is exactly the fallback the page must offer; the browser tests drive the simulated camera.
"""
from __future__ import annotations

import csv
import io
import re

import pytest

from companion.rules.record import judge
from companion.table.controller import TableController
from companion.table.store import EventStore
from companion.web import create_app

PIN = "2468"
DICE = {"Ana": [1, 2, 3, 4, 5], "Ben": [4, 4, 4, 4, 6], "Cyd": [6, 6, 6, 6, 1]}   # 4s with aces: 7


@pytest.fixture
def table(tmp_path):
    store = EventStore(tmp_path / "table.sqlite")
    controller = TableController(store, camera=None, panel=None, reader=None)
    app = create_app({"data_dir": str(tmp_path), "pin": PIN}, controller=controller)
    app.config["TESTING"] = True
    yield app, controller
    store.close()


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)


def logged_in(app):
    """A browser that entered the PIN on the PIN page; returns it and its CSRF token."""
    client = app.test_client()
    token = csrf_of(client.get("/pin").get_data(as_text=True))
    response = client.post("/pin", data={"csrf_token": token, "pin": PIN, "next": "/"})
    assert response.status_code == 302
    return client, token


def post(client, token, path, lang="en", **data):
    return client.post(f"{path}?lang={lang}", data={"csrf_token": token, **data},
                       headers={"Accept": "application/json"})


def start_game(controller, variant="perudo", players=("Ana", "Ben", "Cyd")):
    controller.new_game(variant, {}, list(players), rolloff=False)


def settle_first_round(client, token):
    """Ana bids 3×4, Ben calls dudo, the (failing) camera leaves the dice to be typed in."""
    assert post(client, token, "/play/bid", player="Ana", quantity=3, face=4).status_code == 200
    assert post(client, token, "/play/call", type="dudo", by="Ben").status_code == 200
    fields = {f"dice_{name}": " ".join(map(str, faces)) for name, faces in DICE.items()}
    assert post(client, token, "/play/manual", **fields).status_code == 200


def text_of(response) -> str:
    html = re.sub(r"<svg.*?</svg>", " ", response.get_data(as_text=True), flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_empty_table_offers_set_up_and_a_qr_code_of_its_address(table):
    app, _ = table
    page = app.test_client().get("/", base_url="http://192.168.1.20:8000")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Set up a game" in html
    assert 'id="join"' in html and "<svg" in html and "http://192.168.1.20:8000/" in html


def test_set_up_asks_the_pin_and_refuses_a_form_without_its_csrf_token(table):
    app, controller = table
    client = app.test_client()
    html = client.get("/setup?variant=perudo").get_data(as_text=True)
    token = csrf_of(html)
    players = {"player": ["Ana", "Ben", "Cyd"], "variant": "perudo"}
    forged = client.post("/setup", data={**players, "pin": PIN})
    assert forged.status_code == 409 and controller.state()["phase"] == "setup"
    wrong = client.post("/setup", data={**players, "pin": "0000", "csrf_token": token})
    assert "Wrong PIN." in wrong.get_data(as_text=True) and controller.state()["phase"] == "setup"
    right = client.post("/setup", data={**players, "pin": PIN, "csrf_token": token,
                                        "opt_aces_wild": "on", "opt_ace_bids": "on",
                                        "opt_special_round": "on", "opt_raise_mode": "either"})
    assert right.status_code == 302
    state = controller.state()
    assert [p["name"] for p in state["players"]] == ["Ana", "Ben", "Cyd"]
    assert state["phase"] == "bidding" and state["variant"]["options"]["aces_wild"] is True


def test_set_up_page_explains_each_option_in_the_page_language(table):
    app, _ = table
    html = app.test_client().get("/setup?variant=kozak&lang=pl").get_data(as_text=True)
    assert "Kozak: każdą liczbę asów można postawić tylko raz na rundę." in html
    assert 'name="opt_calza"' in html and 'name="opt_special_face"' in html


def test_moves_need_the_pin_once_per_device_and_a_csrf_token(table):
    app, controller = table
    start_game(controller)
    stranger = app.test_client()
    token = csrf_of(stranger.get("/").get_data(as_text=True))
    refused = post(stranger, token, "/play/bid", player="Ana", quantity=3, face=4)
    assert refused.status_code == 401 and controller.state()["bids"] == []
    client, token = logged_in(app)
    no_token = client.post("/play/bid", data={"player": "Ana", "quantity": 3, "face": 4},
                           headers={"Accept": "application/json"})
    assert no_token.status_code == 400 and controller.state()["bids"] == []
    assert post(client, token, "/play/bid", player="Ana", quantity=3, face=4).status_code == 200
    assert controller.state()["bids"] == [{"player": "Ana", "quantity": 3, "face": 4, "text": "3×4"}]


def test_bid_entry_offers_only_faces_with_a_legal_bid(table):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    post(client, token, "/play/bid", player="Ana", quantity=3, face=4)
    html = client.get("/").get_data(as_text=True)
    faces = dict(re.findall(r'data-face="(\d)" data-min="(\d*)"', html))
    # Boxed Perudo after 3×4: more fours, 3 fives or sixes, 2 aces; twos and threes go down.
    assert faces == {"1": "2", "2": "", "3": "", "4": "4", "5": "3", "6": "3"}
    assert re.search(r'data-face="2" data-min=""\s+aria-pressed="false"\s+disabled', html)
    assert "Bid for Ben" in text_of(client.get("/"))


def test_an_illegal_bid_is_refused_with_the_engines_reason_in_the_page_language(table):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    post(client, token, "/play/bid", player="Ana", quantity=3, face=4)
    english = post(client, token, "/play/bid", player="Ben", quantity=4, face=5)
    assert english.status_code == 409
    assert english.get_json()["error"] == ("Raise the quantity or the face, not both: after 3×4 "
                                           "a bid on face 5 is exactly 3×5.")
    ukrainian = post(client, token, "/play/bid", lang="uk", player="Ben", quantity=4, face=5)
    assert ukrainian.get_json()["error"] == ("Піднімайте кількість або грань, але не обидві: "
                                             "після 3×4 ставка на 5 — рівно 3×5.")
    out_of_turn = post(client, token, "/play/bid", lang="fr", player="Cyd", quantity=5, face=5)
    assert out_of_turn.get_json()["error"] == "C'est au tour de Ben, pas de Cyd."
    assert len(controller.state()["bids"]) == 1


def test_calls_are_offered_only_to_players_allowed_to_make_them(table):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    post(client, token, "/play/bid", player="Ana", quantity=3, face=4)
    html = client.get("/").get_data(as_text=True)
    assert re.findall(r'data-call="(\w+)" data-by="(\w+)"', html) == [("dudo", "Ben")]
    html = client.get("/?lang=ru").get_data(as_text=True)
    assert "не верю!" in html and "кальца" not in html.lower()


def test_verdict_is_shown_with_count_odds_and_every_seats_dice(table):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    settle_first_round(client, token)
    page = client.get("/")
    text = text_of(page)
    html = page.get_data(as_text=True)
    assert "Ben loses the round" in text
    assert "dudo by Ben: 7 on the table against a bid of 3 × 4 — the bid stands" in text
    assert "that there are at least 3" in text
    assert html.count('class="bar hit"') == 13        # counts 3..15 make 3×4 true
    assert len(re.findall(r'class="diebtn" data-entry="\d+"', html)) == 15


@pytest.mark.parametrize("lang, headline, dudo", [
    ("uk", "Ben програє коло", "«не вірю» від Ben"),
    ("crh", "Ben tögerekni uttura", "Ben «dudo» ayttı"),
    ("pl", "Ben przegrywa rundę", "dudo od Ben"),
    ("be", "Ben прайграе кола", "дудо ад Ben"),
    ("ru", "Ben проигрывает раунд", "«не верю» от Ben"),
    ("fr", "Ben perd la manche", "dudo de Ben"),
    ("nl", "Ben verliest de ronde", "dudo door Ben"),
])
def test_the_verdict_reads_in_each_language_with_its_rule_words(table, lang, headline, dudo):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    settle_first_round(client, token)
    text = text_of(client.get(f"/?lang={lang}"))
    assert headline in text and dudo in text


def test_language_follows_the_browser_then_the_switch_then_the_table_default(tmp_path):
    store = EventStore(tmp_path / "t.sqlite")
    controller = TableController(store, camera=None, panel=None, reader=None)
    app = create_app({"data_dir": str(tmp_path), "pin": PIN, "language": "nl"}, controller=controller)
    client = app.test_client()
    assert "Perudotafel" in client.get("/").get_data(as_text=True)
    assert "Стіл Перудо" in client.get("/", headers={"Accept-Language": "uk,en;q=0.5"}).get_data(as_text=True)
    belgian = client.get("/", headers={"Accept-Language": "nl-BE,fr;q=0.8"}).get_data(as_text=True)
    assert 'lang="nl"' in belgian
    assert "Perudotafel" in client.get("/", headers={"Accept-Language": "de-DE"}).get_data(as_text=True)
    client.get("/?lang=be")
    assert "Стол Перуда" in client.get("/", headers={"Accept-Language": "uk"}).get_data(as_text=True)
    store.close()


def test_a_correction_puts_the_round_in_check_and_is_marked_in_the_history(table):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    settle_first_round(client, token)
    # A stray die read for Ana: the counts no longer match, the round needs a check.
    controller.reading(changes=[{"player": "Ana", "face": 2}])
    text = text_of(client.get("/"))
    assert "Needs a check" in text and "Ana holds 5 dice but 6 are on the tray" in text
    stray = len(controller.state()["reveal"]["entries"]) - 1
    assert post(client, token, "/play/correct", entry=stray, remove="1").status_code == 200
    assert post(client, token, "/play/correct", entry=0, face=6).status_code == 200
    state = controller.state()
    assert state["phase"] == "verdict" and state["verdict"]["count"] == 6
    post(client, token, "/play/confirm", action="next")
    history = text_of(client.get("/history"))
    assert "4 corrections by hand" in history and "Ben loses the round" in history


def test_record_download_is_judged_to_the_same_verdicts_and_csv_lists_the_rounds(table):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    settle_first_round(client, token)
    game = controller.state()["game"]
    record = client.get(f"/history/{game}/record.json")
    assert record.status_code == 200 and "attachment" in record.headers["Content-Disposition"]
    verdict = judge(record.get_json())
    assert verdict["rounds"][0]["loser"] == "Ben" and verdict["rounds"][0]["count"] == 7
    rows = list(csv.DictReader(io.StringIO(client.get(f"/history/{game}/rounds.csv").get_data(as_text=True))))
    assert len(rows) == 1
    assert rows[0]["bids"] == "Ana:3x4" and rows[0]["count"] == "7" and rows[0]["loser"] == "Ben"
    assert client.get("/history/99/record.json").status_code == 404


def test_player_names_are_escaped_everywhere(table):
    app, controller = table
    start_game(controller, players=("<b>Ana</b>", "Ben", "Cyd"))
    for path in ("/", "/history"):
        html = app.test_client().get(path).get_data(as_text=True)
        assert "<b>Ana</b>" not in html and "&lt;b&gt;Ana&lt;/b&gt;" in html


def test_the_page_works_with_no_file_from_the_internet(table):
    app, controller = table
    start_game(controller)
    client = app.test_client()
    html = client.get("/").get_data(as_text=True)
    assets = [a for a in re.findall(r'(?:src|href)="([^"#]+)"', html) if not a.startswith("data:")]
    assert assets and all(a.startswith("/") and not a.startswith("//") for a in assets)
    for asset in assets:
        if asset.startswith("/static/"):
            assert client.get(asset).status_code == 200


def test_a_special_round_banner_says_what_changes_in_the_texts_own_words(table):
    app, controller = table
    controller.new_game("club", {"special_at_start": True}, ["Ana", "Ben", "Cyd"],
                        dice={"Ana": 1, "Ben": 5, "Cyd": 5}, starter="Ana")
    client = app.test_client()
    banner = text_of(client.get("/")).split("Players")[0]
    assert "Maputa round for Ana" in banner
    assert "Aces are not wild" in banner and "only raise the quantity" in banner
    russian = text_of(client.get("/?lang=ru"))
    assert "Раунд «Мапута» для Ana" in russian and "Тузы не джокеры" in russian


def test_calza_is_offered_to_each_player_allowed_to_call_it(table):
    app, controller = table
    controller.new_game("perudo", {"calza": True}, ["Ana", "Ben", "Cyd"], rolloff=False)
    client, token = logged_in(app)
    post(client, token, "/play/bid", player="Ana", quantity=3, face=4)
    html = client.get("/?lang=uk").get_data(as_text=True)
    calls = re.findall(r'data-call="(\w+)" data-by="(\w+)"', html)
    assert calls == [("dudo", "Ben"), ("calza", "Ben"), ("calza", "Cyd")]   # not Ana, the bidder
    assert "точно!" in html and "не вірю!" in html
    refused = post(client, token, "/play/call", lang="uk", type="calza", by="Ana")
    assert refused.get_json()["error"] == "Ana зробив останню ставку і не може сказати на неї «точно»."


def test_the_opening_roll_off_can_be_typed_in_and_a_tie_rolls_again(table):
    app, controller = table
    controller.new_game("perudo", {}, ["Ana", "Ben", "Cyd"], rolloff=True)
    client, token = logged_in(app)
    assert "Each player rolls one die in the open" in text_of(client.get("/"))
    post(client, token, "/play/rolls", roll_Ana=6, roll_Ben=6, roll_Cyd=2)
    assert "Tie between Ana, Ben with 6: they roll again." in text_of(client.get("/"))
    assert post(client, token, "/play/rolls", roll_Ana=3, roll_Ben=5).status_code == 200
    assert controller.state()["to_move"] == "Ben"


def test_the_last_round_ends_the_game_with_its_winner_named(table):
    app, controller = table
    controller.new_game("perudo", {}, ["Ana", "Ben"], dice={"Ana": 1, "Ben": 1}, starter="Ana")
    client, token = logged_in(app)
    post(client, token, "/play/bid", player="Ana", quantity=2, face=6)
    post(client, token, "/play/call", type="dudo", by="Ben")
    post(client, token, "/play/manual", dice_Ana="6", dice_Ben="3")
    post(client, token, "/play/confirm", action="next")
    assert controller.state()["phase"] == "over"
    text = text_of(client.get("/?lang=nl"))
    assert "Ben wint het spel!" in text and "Nieuw spel" in text


def test_the_pin_page_only_sends_the_browser_back_into_the_table(table):
    app, _ = table
    client = app.test_client()
    token = csrf_of(client.get("/pin").get_data(as_text=True))
    away = client.post("/pin", data={"csrf_token": token, "pin": PIN, "next": "//evil.example/"})
    assert away.headers["Location"] == "/"
    wrong = client.post("/pin?lang=uk", data={"csrf_token": token, "pin": "9999", "next": "/"})
    assert wrong.status_code == 401 and "Хибний PIN." in wrong.get_data(as_text=True)


def test_dice_counts_show_only_where_the_bag_is_open(table):
    app, controller = table
    controller.new_game("club", {}, ["Ana", "Ben", "Cyd"], rolloff=False)
    html = app.test_client().get("/").get_data(as_text=True)
    assert re.search(r'id="dice-in-play">15<', html) and re.search(r'id="bag">0<', html)
    assert len(re.findall(r'<div class="count">5 ', html)) == 3
    controller.new_game("kozak", {}, ["Ana", "Ben", "Cyd"], rolloff=False, replace=True)
    html = app.test_client().get("/").get_data(as_text=True)
    assert re.search(r'id="dice-in-play">\?<', html) and 'id="dice-secret"' in html


def test_dice_typed_in_with_a_wrong_count_are_refused_in_the_page_language(table):
    app, controller = table
    start_game(controller)
    client, token = logged_in(app)
    post(client, token, "/play/bid", player="Ana", quantity=3, face=4)
    post(client, token, "/play/call", type="dudo", by="Ben")
    short = post(client, token, "/play/manual", lang="pl",
                 dice_Ana="1 2 3 4", dice_Ben="4 4 4 4 6", dice_Cyd="6 6 6 6 1")
    assert short.status_code == 400
    assert short.get_json()["error"] == "Ana ma 5 kostek, podano 4."
    junk = post(client, token, "/play/manual", dice_Ana="1 2 x", dice_Ben="", dice_Cyd="")
    assert junk.get_json()["error"] == "Faces are numbers 1-6, e.g. 1 4 4 2 6."
    assert controller.state()["phase"] == "check"
