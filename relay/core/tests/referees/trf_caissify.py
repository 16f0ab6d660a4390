"""An outside reading of TRF files: caissify-pairings (PyPI, Apache-2.0), a TRF16 reader and a
FIDE Dutch pairing engine cross-checked against bbpPairings by its authors.

  python3 trf_caissify.py read FILE   -> JSON: every player with every round's cell as it reads them
  python3 trf_caissify.py pair FILE   -> JSON: the next round paired by its Dutch engine

Used by relay's tests as the referee of relay's TRF reader and writer; nothing here is relay's
code. Bytes are taken as UTF-8, else Latin-1, as real files come.
"""
import json
import sys

from caissify_pairings import fpc
from caissify_pairings.engines.dutch import DutchEngine
from caissify_pairings.trf import TRFParser


def text_of(path):
    raw = open(path, "rb").read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read(path):
    parsed = TRFParser(text_of(path)).parse()
    out = []
    for p in parsed["players"]:
        out.append({
            "start_rank": p["starting_number"],
            "name": p["name"],
            "rating": p["rating"] or None,
            "federation": p["federation"] or None,
            "fide_id": p["fide_id"],
            "points": p["score"],
            "results": {str(r): c for r, c in p["results"].items()},
        })
    return {"name": parsed["tournament"].get("name"),
            "total_rounds": parsed["tournament"].get("total_rounds"),
            "players": out}


def pair(path):
    parsed = TRFParser(text_of(path)).parse()
    players = {p["starting_number"]: p for p in parsed["players"]}
    played = fpc._max_round(parsed["players"])
    total = parsed["tournament"].get("total_rounds") or played + 1
    nxt = played + 1
    # The checker's helpers take a player into a round when the file has a cell for them there;
    # for the round to be paired, everyone present gets an empty one (no bye written).
    for p in players.values():
        p["results"].setdefault(nxt, {"opponent": None, "color": None, "result": ""})
    engine = DutchEngine(
        players=fpc._build_engine_players(players, nxt),
        previous_pairings=fpc._build_previous_pairings(players, nxt),
        round_number=nxt,
        total_rounds=total,
        initial_color=fpc._infer_initial_color(players),
    )
    pairs = fpc._normalise_engine_output(engine.generate_pairings())
    return {"round": nxt, "pairings": pairs,
            "previous": sorted([list(x) for x in fpc._build_previous_pairings(players, nxt)])}


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    print(json.dumps(read(path) if what == "read" else pair(path)))
