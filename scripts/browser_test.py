#!/usr/bin/env python3
"""Browser test of `draughts serve`: plays in the real page with real clicks (Selenium, headless
Chromium) and checks what the page shows. Run by scripts/browser-test, which installs what it
needs, builds the binary and starts the server:

    browser_test.py --url http://127.0.0.1:PORT [--bin target/release/draughts] [--run DIR]
                    [--screenshot docs/serve.png]
    browser_test.py --make-run DIR      # writes the small training run the run-page case serves

The test never calls the API itself: it clicks, drags and reads the page. `draughts moves` is the
independent referee for the legal targets the page highlights. Prints one line per case and
`browser test: N/N passed`; exits 1 when a case fails.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

START = "W:W31-50:B1-20"


# ---------- FEN ----------
def expand(field):
    """`31-33,K5` -> {31: 'm', 32: 'm', 33: 'm', 5: 'k'}"""
    out = {}
    for part in filter(None, field.split(",")):
        kind = "m"
        if part[0] in "Kk":
            kind, part = "k", part[1:]
        if "-" in part:
            a, b = part.split("-")
            for s in range(int(a), int(b) + 1):
                out[s] = kind
        else:
            out[int(part)] = kind
    return out


def fen_pieces(fen):
    """The pieces of a FEN as {square: 'wm'|'wk'|'bm'|'bk'} and the side to move."""
    parts = fen.strip().rstrip(".").split(":")
    side = parts[0].upper()
    pieces = {}
    for p in parts[1:]:
        color = p[0].lower()
        for s, k in expand(p[1:]).items():
            pieces[s] = color + k
    return pieces, ("white" if side == "W" else "black")


def to_fen(pieces, side):
    def field(c):
        items = sorted(s for s, p in pieces.items() if p[0] == c)
        return ",".join(("K" if pieces[s][1] == "k" else "") + str(s) for s in items)
    return f"{'W' if side == 'white' else 'B'}:W{field('w')}:B{field('b')}"


def squares_of(move):
    return [int(x) for x in re.split(r"[-x]", move)]


# ---------- the page ----------
class Page:
    def __init__(self, driver, url, bin_path):
        self.d = driver
        self.url = url.rstrip("/")
        self.bin = bin_path

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def wait(self, cond, what, timeout=30.0):
        end = time.time() + timeout
        last = None
        while time.time() < end:
            try:
                v = cond()
                if v:
                    return v
            except Exception as e:  # a stale element between renders: try again
                last = e
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}" + (f" ({last})" if last else ""))

    def idle(self, timeout=30.0):
        self.wait(lambda: self.js("return document.body.dataset.busy") == "0" and self.ply() is not None,
                  "the page to be idle", timeout)

    def open(self, query=""):
        self.d.get(self.url + "/" + query)
        self.wait(lambda: self.js("return document.querySelector('#board').dataset.ply") not in (None, ""),
                  "the board to load")
        self.idle()

    def el(self, css):
        from selenium.webdriver.common.by import By
        return self.d.find_element(By.CSS_SELECTOR, css)

    def els(self, css):
        from selenium.webdriver.common.by import By
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def square(self, n):
        return self.el(f'#board [data-square="{n}"]')

    def click(self, n):
        self.square(n).click()

    def drag(self, a, b):
        from selenium.webdriver.common.action_chains import ActionChains
        src, dst = self.square(a), self.square(b)
        ActionChains(self.d).move_to_element(src).click_and_hold().move_by_offset(8, 8) \
            .move_to_element(dst).pause(0.05).release().perform()

    def ply(self):
        v = self.js("return document.querySelector('#board').dataset.ply")
        return int(v) if v not in (None, "") else None

    def wait_ply(self, n, timeout=30.0):
        self.wait(lambda: (self.ply() or 0) >= n and self.js("return document.body.dataset.busy") == "0",
                  f"ply {n} (now {self.ply()})", timeout)

    def pieces(self):
        return {int(k): v for k, v in self.js("""
            const out = {};
            for (const p of document.querySelectorAll('#board [data-piece]'))
              out[p.closest('[data-square]').dataset.square] = p.dataset.piece;
            return out;""").items()}

    def classes(self, n):
        return set(self.square(n).get_attribute("class").split())

    def marked(self, cls):
        return {int(e.get_attribute("data-square")) for e in self.els(f"#board [data-square].{cls}")}

    def moves(self):
        return [e.text.strip() for e in self.els("#movelist .mv")]

    def fen(self):
        return self.el("#fen-current").text.strip()

    def text(self, css):
        return self.el(css).text.strip()

    def select(self, css, value):
        from selenium.webdriver.support.ui import Select
        Select(self.el(css)).select_by_value(value)

    def setup(self, fen):
        box = self.el("#fen-input")
        box.clear()
        box.send_keys(fen)
        self.el("#fen-setup").click()
        self.wait(lambda: fen_pieces(self.fen())[0] == fen_pieces(fen)[0], f"the position {fen}")
        self.idle()

    def new_game(self, level="easy", color="white"):
        self.select("#level", level)
        if self.el("#color").get_attribute("value") != color:
            self.select("#color", color)
        self.el("#new-game").click()
        self.wait(lambda: fen_pieces(self.fen())[0] == fen_pieces(START)[0] or self.ply() > 0, "a new game")
        self.idle()

    def check_board(self):
        """The pieces drawn are the pieces of the FEN the page shows."""
        want, _ = fen_pieces(self.fen())
        got = self.pieces()
        assert got == want, f"the board shows {to_fen(got, 'white')} but the FEN is {self.fen()}"
        for s, p in got.items():
            has_crown = self.js(f"return !!document.querySelector('#board [data-square=\"{s}\"] [data-piece] svg')")
            assert has_crown == (p[1] == "k"), f"square {s}: {p} drawn {'with' if has_crown else 'without'} a crown"

    def legal(self, fen=None):
        """The legal moves (PDN) of the position, from `draughts moves`, the referee."""
        out = subprocess.run([self.bin, "moves", "--fen", fen or self.fen(), "--notation", "pdn"],
                             capture_output=True, text=True, check=True).stdout
        return out.split()


# ---------- cases ----------
PREFERRED = ["32-28", "33-29", "38-33", "31-27", "37-32", "34-30", "39-34", "42-37", "43-38", "44-39",
             "35-30", "40-35", "49-43", "48-42", "47-41", "36-31", "41-36", "46-41", "50-44", "45-40"]


def play_user_move(p, pick, drag=False):
    """Selects the piece of `pick`, checks the highlighted targets against the referee, plays it."""
    sq = squares_of(pick)
    frm, to = sq[0], sq[-1]
    legal = p.legal()
    p.click(frm)
    p.wait(lambda: "selected" in p.classes(frm), f"square {frm} selected")
    expect = {squares_of(m)[-1] for m in legal if squares_of(m)[0] == frm}
    got = p.marked("target")
    assert got == expect, f"targets of {frm}: page {sorted(got)}, referee {sorted(expect)}"
    if drag:
        p.drag(frm, to)
    else:
        p.click(to)


def choose(legal):
    for m in PREFERRED:
        if m in legal:
            return m
    quiet = [m for m in legal if "-" in m]
    return (quiet or legal)[0]


def case_quiet(p, screenshot=None):
    """(a) quiet moves as White at easy; the engine's reply in the move list and on the board."""
    p.open()
    p.new_game("easy", "white")
    assert p.fen() == START, f"new game FEN {p.fen()}"
    p.check_board()
    analysis = p.el("#analysis")
    if not analysis.is_selected():
        analysis.click()
    assert "Your move" in p.text("#status"), f"status {p.text('#status')!r}"
    played = []
    for i in range(3):
        ply = p.ply()
        pick = choose(p.legal())
        play_user_move(p, pick, drag=(i == 1))
        p.wait_ply(ply + 2)
        ms = p.moves()
        assert len(ms) == ply + 2, f"move list {ms}"
        assert ms[ply] == pick, f"move list shows {ms[ply]}, played {pick}"
        reply = ms[ply + 1]
        rs = squares_of(reply)
        pcs = p.pieces()
        assert pcs.get(rs[-1]) in ("bm", "bk"), f"engine reply {reply}: square {rs[-1]} holds {pcs.get(rs[-1])}"
        assert rs[0] == rs[-1] or rs[0] not in pcs, f"engine reply {reply}: square {rs[0]} not empty"
        assert "x" in reply or pcs.get(squares_of(pick)[-1]) == "wm", f"our man is not on {squares_of(pick)[-1]}"
        assert {"last-from"} <= p.classes(rs[0]) and "last-to" in p.classes(rs[-1]), "last move not highlighted"
        assert "current" in p.els("#movelist .mv")[-1].get_attribute("class")
        p.check_board()
        played += [pick + ("(drag)" if i == 1 else ""), reply]
    out = p.el("#analysis-output")
    assert out.is_displayed(), "analysis not shown"
    assert "PV:" in out.text and reply in out.text, f"analysis shows {out.text!r}"
    assert re.search(r"[+−-]?\d+\.\d\d", p.text("#analysis-score")), "no score shown"
    assert "Your move" in p.text("#status"), f"status {p.text('#status')!r}"
    if screenshot:
        for _ in range(4):  # a few more moves, then a piece selected, for the README
            ply = p.ply()
            legal = p.legal()
            m = choose(legal)
            p.click(squares_of(m)[0])
            p.click(squares_of(m)[-1])
            p.wait_ply(ply + 2)
            if p.js("return document.querySelector('#board').dataset.over") == "1":
                break
        legal = p.legal()
        if legal:
            p.click(squares_of(choose(legal))[0])
        time.sleep(0.3)
        os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
        p.d.save_screenshot(screenshot)
    return "played " + " ".join(played)


def case_path(p):
    """(b) a capture whose from and to squares two captures share, chosen by its path."""
    fen = "W:W30:B23,24,32,33,34,41"
    legal = p.legal(fen)
    both = [m for m in legal if m.startswith("30x") and m.endswith("x46")]
    assert sorted(both) == ["30x19x28x37x46", "30x39x28x37x46"], f"referee: {legal}"
    p.open()
    p.new_game("easy", "white")
    # by clicks: from, to, then the square that tells the two apart
    p.setup(fen)
    p.click(30)
    assert p.marked("target") == {46, 30}, f"targets {p.marked('target')}"
    p.click(46)
    p.wait(lambda: p.el("#chooser").is_displayed(), "the chooser")
    options = sorted(b.get_attribute("data-move") for b in p.els("#chooser button[data-move]"))
    assert options == ["30x19x28x37x46", "30x39x28x37x46"], f"chooser {options}"
    assert p.marked("via-option") == {19, 39}, f"squares to click: {p.marked('via-option')}"
    assert p.ply() == 0 and p.fen() == "W:W30:B23,24,32-34,41", "played before the path was chosen"
    p.click(39)
    p.wait_ply(2)  # the capture and the engine's reply (23 or 24 moving down)
    assert p.moves()[0] == "30x39x28x37x46", f"move list {p.moves()}"
    pcs = p.pieces()
    assert pcs.get(46) == "wm" and not ({32, 33, 34, 41} & set(pcs)), f"board {pcs}"
    assert sorted(pcs.values()) == ["bm", "bm", "wm"], f"board {pcs}"
    p.check_board()
    # by the chooser: from, to, then the other path's button
    p.setup(fen)
    p.click(30)
    p.click(46)
    p.wait(lambda: p.el("#chooser").is_displayed(), "the chooser")
    p.el('#chooser button[data-move="30x19x28x37x46"]').click()
    p.wait_ply(2)
    assert p.moves()[0] == "30x19x28x37x46", f"move list {p.moves()}"
    pcs = p.pieces()
    assert not ({23, 24, 32, 41} & set(pcs)) and pcs.get(46) == "wm", f"board {pcs}"
    p.check_board()
    # the loop capture back to its own square: the first landing square, then the square itself
    p.setup(fen)
    p.click(30)
    p.click(19)
    assert p.ply() == 0, "played on an ambiguous first landing square"
    p.click(30)
    p.wait_ply(2)
    assert p.moves()[0] == "30x30", f"move list {p.moves()}"
    pcs = p.pieces()
    assert pcs.get(30) == "wm" and not ({23, 24, 33, 34} & set(pcs)), f"board {pcs}"
    return "30x39x28x37x46 by clicking 30, 46, 39; 30x19x28x37x46 from the chooser; 30x30 by 30, 19, 30"


def case_promotion(p):
    """(c) a man reaching the far row becomes a king, drawn as a king."""
    fen = "W:W7,48:B13"
    assert "7-2" in p.legal(fen)
    p.open()
    p.new_game("easy", "white")
    p.setup(fen)
    assert p.pieces().get(7) == "wm"
    p.click(7)
    p.click(2)
    p.wait_ply(2)
    assert p.moves()[0] == "7-2", f"move list {p.moves()}"
    pcs = p.pieces()
    assert pcs.get(2) == "wk" and 7 not in pcs, f"board {pcs}"
    assert p.js("return !!document.querySelector('#board [data-square=\"2\"] .piece.king svg')"), "no crown on 2"
    assert fen_pieces(p.fen())[0].get(2) == "wk", f"FEN {p.fen()}"
    p.check_board()
    return f"7-2 made a king on 2 (engine replied {p.moves()[1]}; FEN {p.fen()})"


def finished_download(folder, suffix):
    """The text of the one file ending in `suffix` in `folder` once Chromium has finished writing it,
    else None. Chromium reserves the final name with an empty file and writes to a `.crdownload`
    beside it, so a file that exists may not be complete yet: wait for no partial file and a
    non-empty one."""
    names = os.listdir(folder)
    if any(n.endswith(".crdownload") for n in names):
        return None
    path = next((os.path.join(folder, n) for n in names if n.endswith(suffix)), None)
    if path is None or os.path.getsize(path) == 0:
        return None
    with open(path, encoding="utf-8") as f:
        return f.read() or None


def case_finished(p, download_dir):
    """(d) a game won in one capture: result and reason shown; a drawn game: the draw rule; the PDN."""
    p.open()
    p.new_game("easy", "white")
    p.setup("W:W28:B23")
    p.click(28)
    p.click(19)
    p.wait(lambda: p.js("return document.querySelector('#board').dataset.over") == "1", "the game to end")
    p.idle()
    res = p.el("#result")
    assert res.is_displayed(), "no result shown"
    assert "2-0" in res.text and "White wins" in res.text, f"result {res.text!r}"
    reason = p.text("#reason")
    assert "no pieces" in reason.lower(), f"reason {reason!r}"
    assert "over" in p.text("#status").lower(), f"status {p.text('#status')!r}"
    assert p.moves() == ["28x19"] and "2-0" in p.text("#movelist")
    before = p.fen()
    p.click(19)
    assert p.fen() == before
    # the PDN file
    for f in os.listdir(download_dir):
        os.remove(os.path.join(download_dir, f))
    p.el("#download").click()
    pdn = p.wait(lambda: finished_download(download_dir, ".pdn"), "the PDN download", 15)
    for tag in ['[Event "', '[White "You"]', '[Black "draughts easy', '[Result "2-0"]', '[SetUp "1"]',
                '[FEN "W:W28:B23"]']:
        assert tag in pdn, f"{tag} not in the PDN:\n{pdn}"
    assert re.search(r"\n1\. 28x19 2-0\n", pdn), f"moves not in the PDN:\n{pdn}"
    won = f"{p.text('#result .score')} {p.text('#result .winner')}: {reason}"
    # a draw: one king each, five moves each (the 5-move rule); White's king keeps out of reach
    p.select("#level", "medium")
    p.setup("W:WK50:BK1")
    # the draw rules counting are shown under the status, and count down
    p.wait(lambda: "5-move rule: 5 moves each left" in p.text("#draw-rules"), "the 5-move rule's count")
    first = True
    for _ in range(8):
        if p.js("return document.querySelector('#board').dataset.over") == "1":
            break
        ply = p.ply()
        pcs, _ = fen_pieces(p.fen())
        k = next(s for s, v in pcs.items() if v == "wk")
        safe = None
        for m in p.legal():
            after = dict(pcs)
            del after[k]
            after[squares_of(m)[-1]] = "wk"
            if not any("x" in r for r in p.legal(to_fen(after, "black"))):
                safe = m
                break
        assert safe, f"no safe king move in {p.fen()}"
        p.click(k)
        p.click(squares_of(safe)[-1])
        p.wait(lambda: p.ply() > ply and p.js("return document.body.dataset.busy") == "0", "the reply")
        if first and p.js("return document.querySelector('#board').dataset.over") != "1":
            p.wait(lambda: "5-move rule: 4 moves each left" in p.text("#draw-rules"), "the count after one move each")
            first = False
    p.wait(lambda: p.js("return document.querySelector('#board').dataset.over") == "1", "the draw")
    assert p.text("#draw-rules") == "", f"draw rules shown after the end: {p.text('#draw-rules')!r}"
    res = p.el("#result")
    assert "1-1" in res.text and "Draw" in res.text, f"result {res.text!r}"
    assert "5-move rule" in p.text("#reason"), f"reason {p.text('#reason')!r}"
    drawn = f"{p.text('#result .score')} {p.text('#result .winner')}: {p.text('#reason')} (after {p.ply()} plies)"
    return f"{won}; {drawn}; PDN download has the tags and 1. 28x19 2-0"


def case_undo_flip(p):
    """(e) Undo takes back our move and the engine's reply; Flip turns the board."""
    p.open()
    p.new_game("easy", "white")
    assert p.el("#undo").get_attribute("disabled") is not None, "undo enabled with no move to take back"
    p.click(32)
    p.click(28)
    p.wait_ply(2)
    after_one = p.fen()
    m = choose(p.legal())
    p.click(squares_of(m)[0])
    p.click(squares_of(m)[-1])
    p.wait_ply(4)
    p.el("#undo").click()
    p.wait(lambda: p.ply() == 2, "undo to ply 2")
    p.idle()
    assert p.fen() == after_one and len(p.moves()) == 2, f"after one undo: {p.fen()} {p.moves()}"
    p.check_board()
    p.el("#undo").click()
    p.wait(lambda: p.ply() == 0, "undo to the start")
    p.idle()
    assert p.fen() == START and p.moves() == [], f"after two undos: {p.fen()} {p.moves()}"
    p.check_board()
    # flip
    def pos(n):
        r = p.square(n).rect
        return r["x"], r["y"]
    (x1, y1), (x50, y50) = pos(1), pos(50)
    assert y1 < y50 and x1 < x50, "square 1 is not at the top"
    before = p.pieces()
    p.el("#flip").click()
    p.wait(lambda: pos(1)[1] > pos(50)[1], "the board to turn")
    (x1, y1), (x50, y50) = pos(1), pos(50)
    assert x1 > x50, "square 1 is not at the bottom right after the flip"
    assert p.pieces() == before and p.fen() == START, "the flip changed the position"
    assert "Black" in p.text("#bar-bottom") and "White" in p.text("#bar-top"), "player bars not turned"
    p.click(32)
    p.click(28)
    p.wait_ply(2)
    assert p.moves()[0] == "32-28", "cannot play on the flipped board"
    p.el("#flip").click()
    p.wait(lambda: pos(1)[1] < pos(50)[1], "the board to turn back")
    return "undo: ply 4 -> 2 -> 0 (start FEN); flip: square 1 top-left -> bottom-right -> back"


def server_info(p):
    """GET /api/info, to see what the server is doing (the page does not show it)."""
    import urllib.request
    with urllib.request.urlopen(p.url + "/api/info", timeout=10) as r:
        return json.load(r)


def case_live(p):
    """(i) Live analysis: the evaluation bar and the line update as the search deepens, follow the
    position when a move is played, and the server's search stops when the box is unticked. (The
    level list shows the levels' ratings.)"""
    p.open()
    rated = [o.text for o in p.els("#level option") if re.search(r"· \d+$", o.text)]
    assert len(rated) == len(p.els("#level option")) >= 6, f"levels without a rating: {[o.text for o in p.els('#level option')]}"

    p.new_game("easy", "white")
    assert not p.el("#evalbar").is_displayed(), "the evaluation bar shows before live analysis is on"
    p.el("#live").click()
    depth = lambda: int(p.js("return document.querySelector('#live-output').dataset.depth || '0'"))
    # The line is redrawn at every iteration: read it in one script (an element found a moment
    # earlier may be gone).
    line = lambda: p.js("const e = document.querySelector('#live-pv'); return e ? e.textContent : ''").split()
    live_fen = lambda: p.js("return document.querySelector('#live-output').dataset.fen")
    p.wait(lambda: depth() >= 3 and live_fen() == p.fen(), "live analysis of the start position")
    assert p.el("#evalbar").is_displayed(), "no evaluation bar"
    first = depth()
    p.wait(lambda: depth() > first + 2, f"the analysis to go deeper than {first + 2}")
    deeper = depth()
    pv = line()
    assert pv and pv[0] in p.legal(), f"the line {pv} does not start with a legal move"
    fill = p.js("return parseFloat(document.querySelector('#evalbar .fill').style.height)")
    assert 5 < fill < 95, f"the bar's white share {fill}% at the start position"
    assert server_info(p)["searches_running"] == 1, "the server is not running the analysis"
    # A move of ours: the engine replies, and the analysis follows the new position.
    p.click(32)
    p.click(28)
    p.wait_ply(2)
    p.wait(lambda: live_fen() == p.fen() and depth() >= 3, "live analysis of the position after the reply")
    pv = line()
    assert pv[0] in p.legal(), f"the line {pv} is not of the position on the board"
    # Unticked: the fetch is aborted, which closes the connection, and the server stops the search.
    p.el("#live").click()
    assert not p.el("#evalbar").is_displayed(), "the evaluation bar stays after live analysis is off"
    t0 = time.time()
    p.wait(lambda: server_info(p)["searches_running"] == 0, "the server to stop the analysis", timeout=10)
    freed = time.time() - t0
    return f"depth {first} -> {deeper}, bar {fill:.0f}% white; unticked: the server's search ended within {freed:.2f} s"


def case_clock(p):
    """(j) Clock games: both clocks run in turn with their increment, the engine manages its own
    clock without losing on time, and a player whose flag falls loses."""
    p.open("?clock=20000+500&color=black&level=hard")
    ms = lambda where: int(p.el(f"#{where} .clock").get_attribute("data-ms"))
    running = lambda where: "running" in p.el(f"#{where} .clock").get_attribute("class").split()
    assert p.el("#bar-top .clock").is_displayed() and p.el("#bar-bottom .clock").is_displayed(), "no clocks"
    # We play Black (at the bottom); the engine (White, top) opens under its clock.
    for ply in (1, 3, 5):
        p.wait_ply(ply, timeout=40)
        assert running("bar-bottom") and not running("bar-top"), "our clock is not the one running"
        assert not p.js("return document.querySelector('#board').dataset.over") == "1", p.text("#result")
        m = choose(p.legal())
        p.click(squares_of(m)[0])
        p.click(squares_of(m)[-1])
    p.wait_ply(6, timeout=40)
    engine_left, ours = ms("bar-top"), ms("bar-bottom")
    assert 0 < engine_left < 20000 + 3 * 500, f"the engine's clock {engine_left} ms after three moves"
    assert p.js("return document.querySelector('#board').dataset.over") == "0", "the game ended: " + p.text("#result")
    # Our flag falls: 2 seconds, nobody moves for us.
    p.open("?clock=2000+0&color=white&level=easy")
    p.wait(lambda: p.js("return document.querySelector('#board').dataset.over") == "1", "our flag to fall", timeout=10)
    result = p.text("#result")
    assert "0-2" in result and "time" in result.lower(), f"after our flag fell: {result}"
    assert ms("bar-bottom") == 0
    p.click(32)
    assert not p.marked("selected"), "a piece can still be selected after the flag fell"
    return f"engine (hard) left {engine_left} ms of 20 s + 0.5 s after 3 moves, ours {ours} ms; flag: {result!r}"


def case_illegal(p):
    """(f) illegal clicks do not change the position."""
    p.open()
    p.new_game("easy", "white")
    fen, pieces = p.fen(), p.pieces()
    def unchanged(what):
        time.sleep(0.2)
        p.idle()
        assert p.fen() == fen and p.pieces() == pieces and p.moves() == [] and p.ply() == 0, f"{what} changed the position"
    p.click(46)                      # own man that cannot move
    assert not p.marked("selected"), "a blocked man was selected"
    assert p.text("#message"), "no explanation for the blocked man"
    unchanged("clicking 46")
    p.click(19)                      # the opponent's man
    assert not p.marked("selected")
    unchanged("clicking 19")
    p.click(25)                      # an empty square
    unchanged("clicking 25")
    p.click(32)
    p.click(26)                      # not a target of 32
    unchanged("32 then 26")
    assert "cannot go to 26" in p.text("#message"), f"message {p.text('#message')!r}"
    p.click(32)                      # deselect
    p.drag(33, 24)                   # an illegal drag
    unchanged("dragging 33 to 24")
    p.el("#board .sq.light").click()  # a light square
    unchanged("clicking a light square")
    # captures are compulsory: the man that could move quietly is refused, and so is a quiet move
    p.setup("W:W32,45:B28")
    assert p.legal() == ["32x23"], p.legal()
    fen, pieces = p.fen(), p.pieces()
    p.click(45)
    assert not p.marked("selected") and "compulsory" in p.text("#message"), f"message {p.text('#message')!r}"
    p.click(32)
    assert p.marked("target") == {23}, f"targets {p.marked('target')}"
    p.click(27)
    time.sleep(0.2)
    p.idle()
    assert p.fen() == fen and p.ply() == 0 and p.pieces() == pieces, "a quiet move was played with a capture on"
    return "blocked man, opponent's man, empty square, 32 then 26, an illegal drag, a quiet move when a capture is on: no change"


def case_black(p):
    """(g) playing Black: the engine opens ("thinking..."), the board turns."""
    p.open()
    p.select("#level", "hard")
    # "thinking..." lasts as long as the engine's move (a second at most): a latch in the page
    # records that it was shown, where polling through the driver could miss it on a busy machine.
    p.js("""window.sawThinking = false;
        const s = document.querySelector('#status');
        new MutationObserver(() => { if (s.textContent.includes('thinking')) window.sawThinking = true; })
            .observe(s, {childList: true, characterData: true, subtree: true});""")
    p.select("#color", "black")
    p.wait_ply(1, 60)
    assert p.js("return window.sawThinking"), "the status never said thinking... while the engine chose its move"
    ms = p.moves()
    assert len(ms) == 1 and squares_of(ms[0])[0] >= 31, f"move list {ms}"
    assert p.square(50).rect["y"] < p.square(1).rect["y"], "Black is not at the bottom"
    assert "Your move" in p.text("#status"), f"status {p.text('#status')!r}"
    p.check_board()
    p.select("#level", "easy")
    m = choose([x for x in p.legal()])
    p.click(squares_of(m)[0])
    p.click(squares_of(m)[-1])
    p.wait_ply(3)
    return f"engine opened {ms[0]} at hard (status showed thinking...), we replied {m}"


def case_run(p, run_dir):
    """(h) the run page: plots drawn, checkpoints with play links; /?checkpoint=NAME plays with it."""
    p.d.get(p.url + "/run")
    p.wait(lambda: p.js("return document.body.dataset.loaded") == "1", "the run page")
    for cid in ["plot-rating", "plot-loss", "plot-selfplay"]:
        inked = p.js(f"""
            const c = document.getElementById('{cid}'), g = c.getContext('2d');
            const d = g.getImageData(0, 0, c.width, c.height).data; let n = 0;
            for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
            return n;""")
        assert inked > 2000, f"{cid} is (almost) blank: {inked} pixels"
    rows = p.els("#checkpoint-table tbody tr")
    links = p.els("#checkpoint-table a[data-checkpoint]")
    listed = len(os.listdir(os.path.join(run_dir, "checkpoints"))) // 2
    assert len(rows) == listed, f"{len(rows)} checkpoints listed, the run has {listed}"
    for a in links:
        assert a.get_attribute("href").endswith("/?checkpoint=" + a.get_attribute("data-checkpoint")), a.get_attribute("href")
    name = links[0].get_attribute("data-checkpoint") if links else "sparse-s00013200"
    # the page polls: a new cycle appears without reloading
    n = sum(1 for _ in open(os.path.join(run_dir, "metrics.jsonl")))
    with open(os.path.join(run_dir, "metrics.jsonl"), "a") as f:
        f.write(json.dumps({"stage": "eval", "cycle": 7, "model": name, "opponent": "alphabeta:movetime=100",
                            "elo": 120.0, "elo_low": 60.0, "elo_high": 185.0, "games": 40, "wins": 18,
                            "draws": 14, "losses": 8, "score": 0.625, "time": 1796140000.0}) + "\n")
    p.wait(lambda: f"{n + 1} metrics lines" in p.text("#updated"), "the page to poll the new line", 25)
    assert "+120" in p.text("#summary"), f"summary {p.text('#summary')!r}"
    if not links:
        return "3 plots drawn, the poll picked up a new line; no sparse checkpoint to play (models/sparse-2h missing)"
    p.el(f'#checkpoint-table a[data-checkpoint="{name}"]').click()
    p.wait(lambda: "checkpoint=" in p.d.current_url, "the play page")
    p.wait(lambda: p.js("return document.querySelector('#board').dataset.ply") not in (None, ""), "the board")
    p.idle()
    assert name in p.text("#engine-info"), f"header {p.text('#engine-info')!r}"
    p.new_game("easy", "white")
    if not p.el("#analysis").is_selected():
        p.el("#analysis").click()
    p.click(32)
    p.click(28)
    p.wait_ply(2)
    assert name in p.text("#analysis-output"), f"analysis {p.text('#analysis-output')!r}"
    assert name in p.text("#bar-top"), f"player bar {p.text('#bar-top')!r}"
    return f"3 plots drawn, {len(rows)} checkpoints, the poll picked up a new line; played against {name}"


# ---------- a small training run for the run page ----------
def make_run(run_dir, repo):
    os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
    copied = []
    for model in ["models/sparse-2h", "models/cpu-2h"]:
        src = os.path.join(repo, model)
        if not os.path.isdir(src):
            continue
        for f in os.listdir(src):
            if re.match(r".*-s\d+\.(json|safetensors)$", f):
                shutil.copy(os.path.join(src, f), os.path.join(run_dir, "checkpoints", f))
                copied.append(f)
    t = 1796130000.0
    lines = [{"stage": "start", "cycle": 0, "name": "sparse", "net": "sparse-128-32-32", "rules": "fmjd",
              "seed": 1, "time": t, "version": "0.1.0"}]
    step = 0
    for c in range(1, 7):
        t += 250
        lines.append({"stage": "selfplay", "cycle": c, "games": 2000, "positions": 280000 + 5000 * c,
                      "positions_per_second": 1100 + 60 * c, "games_per_hour": 27000 + 900 * c,
                      "white_wins": 660, "draws": 650, "black_wins": 690, "plies_mean": 145.0,
                      "seconds": 250, "model": f"sparse-s{step:08d}", "time": t})
        step += 2200
        t += 160
        lines.append({"stage": "train", "cycle": c, "step": step, "steps": 2200, "loss": 2.3 - 0.12 * c,
                      "policy_loss": 1.6 - 0.1 * c, "value_loss": 0.7 - 0.02 * c, "reg": 0.4,
                      "lr": 0.001, "samples_per_second": 7000, "model": f"sparse-s{step:08d}", "time": t})
        t += 100
        elo = -40 + 25 * c
        lines.append({"stage": "eval", "cycle": c, "model": f"sparse-s{step:08d}",
                      "opponent": "alphabeta:movetime=100", "elo": elo, "elo_low": elo - 90,
                      "elo_high": elo + 95, "games": 20, "wins": 6, "draws": 8, "losses": 6,
                      "score": 0.5, "time": t})
    with open(os.path.join(run_dir, "metrics.jsonl"), "w") as f:
        for l in lines:
            f.write(json.dumps(l) + "\n")
    return copied


# ---------- main ----------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--bin", default="target/release/draughts")
    ap.add_argument("--run", help="the run directory the server serves (enables the run-page case)")
    ap.add_argument("--screenshot", help="save a PNG of the page mid-game here")
    ap.add_argument("--make-run", metavar="DIR", help="write a small training run into DIR and exit")
    ap.add_argument("--only", help="comma-separated case letters to run (a-j)")
    a = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if a.make_run:
        make_run(a.make_run, repo)
        return 0
    if not a.url:
        ap.error("--url is needed")

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,900",
                "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1"]:
        opts.add_argument(arg)
    for b in ["/usr/lib/chromium/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "",
              shutil.which("google-chrome") or ""]:
        if b and os.path.exists(b):
            opts.binary_location = b
            break
    download_dir = tempfile.mkdtemp(prefix="draughts-pdn-")
    opts.add_experimental_option("prefs", {"download.default_directory": download_dir,
                                           "download.prompt_for_download": False})
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": download_dir})
    except Exception:
        pass
    # the viewport itself 1200 x 900 (the window has some chrome around it)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(1200 + 1200 - inner[0], 900 + 900 - inner[1])
    p = Page(driver, a.url, a.bin)
    cases = [
        ("a", "quiet moves against easy", lambda: case_quiet(p, a.screenshot)),
        ("b", "capture chosen by its path", lambda: case_path(p)),
        ("c", "promotion", lambda: case_promotion(p)),
        ("d", "finished games and PDN", lambda: case_finished(p, download_dir)),
        ("e", "undo and flip", lambda: case_undo_flip(p)),
        ("f", "illegal clicks", lambda: case_illegal(p)),
        ("g", "playing Black", lambda: case_black(p)),
        ("i", "live analysis, stopped when unticked", lambda: case_live(p)),
        ("j", "clock games", lambda: case_clock(p)),
    ]
    if a.run:
        cases.append(("h", "run page and checkpoints", lambda: case_run(p, a.run)))
    if a.only:
        cases = [c for c in cases if c[0] in a.only.split(",")]
    passed = 0
    try:
        for letter, name, fn in cases:
            t0 = time.time()
            try:
                driver.get_log("browser")  # drop what came before
                detail = fn()
                errors = [l["message"] for l in driver.get_log("browser") if l.get("level") == "SEVERE"]
                assert not errors, f"errors in the browser console: {errors}"
                passed += 1
                print(f"ok   ({letter}) {name}: {detail} [{time.time() - t0:.1f} s]", flush=True)
            except Exception as e:
                print(f"FAIL ({letter}) {name}: {e}", flush=True)
                traceback.print_exc()
                shot = os.path.join(tempfile.gettempdir(), f"browser-test-fail-{letter}.png")
                try:
                    driver.save_screenshot(shot)
                    logs = driver.get_log("browser")
                    for l in logs[-10:]:
                        print("   console:", l.get("message"), file=sys.stderr)
                    print(f"   screenshot of the failure: {shot}", file=sys.stderr)
                except Exception:
                    pass
    finally:
        driver.quit()
        shutil.rmtree(download_dir, ignore_errors=True)
    print(f"browser test: {passed}/{len(cases)} passed")
    if a.screenshot and os.path.exists(a.screenshot):
        print(f"screenshot: {a.screenshot}")
    return 0 if passed == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
