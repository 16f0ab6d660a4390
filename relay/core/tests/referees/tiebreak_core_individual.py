"""An outside computation of FIDE C.07 individual tie-breaks: tiebreak-core 1.2.0 (PyPI), run on
a tournament as relay read it.

  python3 tiebreak_core_individual.py < REQUEST.json   -> JSON on stdout

The request (written by relay's test `standings_files.rs`) carries relay's reading of a TRF
file, nothing more: every player's start rank and rating, one cell per round as the file has it
(an opponent with colour and result, or a bye letter, or blank), the points of each kind of
result, the rounds the standings cover, the ruleset ("fide-2026" or "fide-2024"), swiss or
round robin, the codes to compute and the orders to rank by. How a cell becomes one of the
library's kinds of round is decided here, from the cell, not taken from relay:

  a result 1 = 0 W D L against an opponent   a game played ("played")
  + or - against an opponent                 a forfeit won or lost against them
  U                                          the pairing-allocated bye
  F, H, Z, blank, "-" without an opponent     a requested bye (F: full point, the library
                                              files it with the pairing-allocated bye)
  + without an opponent                       a forfeit won, opponent unknown

The answer: {"values": {code: {start rank: value}}, "unsupported": [code...],
"orders": [[start ranks best first] or null]}. Values come from the library's strict
ranking entry point (every value of a criterion list at once, one shared precomputation),
or, for codes without a criterion id (BH/C3, KS/L-1), from calculate_descriptor_strict;
orders under fide-2026
from its descriptor ranking (rank_descriptors_strict; by criterion id through
rank_standings_strict where a code has no descriptor calculator, and on files of more than 60
players, see DESCRIPTOR_PLAYERS), under
fide-2024 from rank_standings_strict (the descriptor entry points compute fide-2026 values
whatever the ruleset). Nothing here is relay's code.
"""
import json
import sys

import tiebreak_core as tc
from tiebreak_core import fide2024, fide2026
from tiebreak_core.models import (
    FORFEIT_LOSS,
    FORFEIT_WIN,
    PAIRING_BYE,
    PLAYED,
    REQUESTED_BYE,
    GameRecord,
    PlayerTiebreakData,
)

# 202 codes -> the library's criterion ids.
IDS = {
    "BH": "buchholz", "BH/C1": "buchholz_cut1", "BH/C2": "buchholz_cut2",
    "BH/M1": "median_buchholz", "BH/M2": "median_buchholz_2",
    "SB": "sonneborn_berger", "SB/C1": "sonneborn_berger_cut1",
    "SB/C2": "sonneborn_berger_cut2",
    "PS": "progressive", "PS/C1": "progressive_cut1",
    "WIN": "wins", "WON": "won", "BPG": "games_black", "BWG": "wins_black",
    "REP": "rounds_elected", "STD": "std",
    "ARO": "aro", "ARO/C1": "aro_cut1", "ARO/C2": "aro_cut2",
    "ARO/M1": "aro_median1", "ARO/M2": "aro_median2",
    "AOB": "aob", "AOB/F": "aob_fb",
    "FB": "fore_buchholz", "FB/C1": "fore_buchholz_cut1",
    "FB/C2": "fore_buchholz_cut2", "FB/M1": "fore_median1", "FB/M2": "fore_median2",
    "BH/F": "fore_buchholz",
    "KS": "koya", "TPR": "tpr", "PTP": "ptp", "APRO": "apro", "APPO": "appo",
    "DE": "direct_encounter", "TPN": "tpn", "RTNG": "rtng",
}
ORDER_ONLY = ("DE", "TPN", "RTNG")
# The descriptor ranking computes every value afresh for every player (quadratic): on larger
# files the orders go through rank_standings_strict with the same criteria by id, which
# shares one precomputation (the same engine, the same stages).
DESCRIPTOR_PLAYERS = 60


def records(req):
    """The library's players from relay's cells."""
    s = req["scoring"]
    game_points = {"1": s["win"], "W": s["win"], "=": s["draw"], "D": s["draw"],
                   "0": s["loss"], "L": s["loss"]}
    bye_points = {"U": s["pairing_bye"], "F": s["full_bye"], "H": s["half_bye"],
                  "Z": s["zero_bye"], "-": s["zero_bye"], "+": s["forfeit_win"],
                  "": s["zero_bye"]}
    rating = {p["start_rank"]: p["rating"] or 0 for p in req["players"]}
    out = {}
    for p in req["players"]:
        games = []
        for rnd, c in enumerate(p["cells"][: req["rounds"]], start=1):
            opp = c.get("opponent")
            colour = "black" if c.get("colour") == "b" else "white"
            if opp is not None:
                res = c.get("result")
                if res is None:
                    continue  # paired, not played yet
                if res == "+":
                    kind, score = FORFEIT_WIN, s["forfeit_win"]
                elif res == "-":
                    kind, score = FORFEIT_LOSS, s["forfeit_loss"]
                else:
                    kind, score = PLAYED, game_points[res]
                games.append(GameRecord(opponent_id=opp, opponent_rating=rating[opp],
                                        score=score, color=colour, round_number=rnd,
                                        kind=kind))
                continue
            bye = c.get("bye") or ""
            if bye == "U":
                kind = PAIRING_BYE
            elif bye == "+":
                kind = FORFEIT_WIN
            else:
                kind = REQUESTED_BYE
            games.append(GameRecord(opponent_id=-1, opponent_rating=0,
                                    score=bye_points[bye], color=colour,
                                    round_number=rnd, kind=kind))
        points = sum(g.score for g in games)
        out[p["start_rank"]] = PlayerTiebreakData(player_id=p["start_rank"],
                                                  rating=rating[p["start_rank"]],
                                                  points=points, games=games)
    return out


def main():
    req = json.load(sys.stdin)
    players = records(req)
    ruleset, mode, rounds = req["ruleset"], req["mode"], req["rounds"]
    draw = req["scoring"]["draw"]
    keys = {pid: pid for pid in players}
    extra = {} if ruleset == "fide-2024" else {"mode": mode, "draw_points": draw}
    values, unsupported = {}, []
    for forfeits in (False, True):
        wanted = [c for c in req["codes"]
                  if c.endswith("/P") == forfeits and c not in ORDER_ONLY]
        if not wanted:
            continue
        ids = {c: IDS.get(c[:-2] if forfeits else c) for c in wanted}
        usable = []
        for c, cid in ids.items():
            supported = cid is not None and (
                fide2024.is_supported_criterion(cid) if ruleset == "fide-2024"
                else cid in fide2026.FIDE2026_REGISTRY)
            if cid is None:
                continue  # no criterion id: the descriptor machine, below
            if not supported or (forfeits and ruleset == "fide-2024"):
                unsupported.append(c)
            else:
                usable.append(c)
        if not usable:
            continue
        more = dict(extra)
        if forfeits:
            more["forfeits_as_played"] = True
        res = tc.rank_standings_strict(players, [ids[c] for c in usable], rounds,
                                       deterministic_keys=keys, ruleset=ruleset, **more)
        for c in usable:
            values[c] = {str(p.player_id): p.values[ids[c]] for p in res.players}
    # Codes with no criterion id (BH/C3, PS/C2, KS/L-1 …): the descriptor machine, one player
    # at a time (quadratic, so on the smaller files only), fide-2026 alone having it.
    generic = [c for c in req["codes"] if c not in values and c not in unsupported
               and c not in ORDER_ONLY]
    if ruleset == "fide-2026" and len(players) <= DESCRIPTOR_PLAYERS:
        for c in generic:
            values[c] = {str(pid): tc.calculate_descriptor_strict(p, players, c, rounds,
                                                                  ruleset=ruleset, mode=mode,
                                                                  draw_points=draw)
                         for pid, p in players.items()}
    else:
        unsupported.extend(generic)
    orders = []
    for order in req["orders"]:
        res = None
        try:
            if ruleset == "fide-2026" and len(players) <= DESCRIPTOR_PLAYERS:
                try:
                    res = tc.rank_descriptors_strict(players, order, rounds,
                                                     deterministic_keys=keys, ruleset=ruleset,
                                                     mode=mode, draw_points=draw,
                                                     pairing_numbers=keys)
                except (tc.UnsupportedCriterionError, KeyError):
                    # Codes the descriptor machine has no calculator for (WIN, STD, TPR…;
                    # 1.2.0 answers a bare KeyError for some): the same engine by criterion
                    # id.
                    res = None
            if res is None:
                more = dict(extra)
                if ruleset == "fide-2026":
                    more["pairing_numbers"] = keys
                res = tc.rank_standings_strict(players, [IDS[c] for c in order], rounds,
                                               deterministic_keys=keys, ruleset=ruleset,
                                               **more)
            orders.append([p.player_id for p in res.players])
        except (tc.TiebreakError, KeyError):
            orders.append(None)
    json.dump({"values": values, "unsupported": unsupported, "orders": orders}, sys.stdout)


if __name__ == "__main__":
    main()
