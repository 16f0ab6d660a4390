"""The outside referee of relay's team standings: tiebreak-core 1.2.0 (PyPI), given the team
matches as relay derived them from a TRF, computes every team value asked for and its ranking.

Reads one JSON object on stdin:
  {"rounds": 14, "mp_win": 2, "mp_draw": 1, "max_gp_per_match": 4,
   "codes": ["BH:MP/C1/P", ...],   # a value per team for each (group stages have none)
   "rank_by": ["EDET/P", ...],     # the tie-breaks the ranking uses, after MP
   "teams": [{"id": 1, "mp": 15, "gp": 28, "board_points": [8.5, ...],
              "matches": [{"round": 1, "opponent": 17, "mp": 2, "gp": 3, "kind": "played"}]}]}
`kind` is the library's: played, forfeit_win, forfeit_loss, pairing_bye, unplayed; an unknown
opponent is -1. Writes one JSON object on stdout:
  {"values": {"1": {"BH:MP/C1/P": 224.0, "EDET/P": null}}, "order": [22, 16, ...],
   "refused": {"EDET/P": "why"}}
A code the library has no value for (a group stage, a form it does not take) is null with why.
It does not read the TRF: the test hands it relay's matches, so it checks relay's arithmetic
and ordering, not relay's reading of the file.
"""

import json
import sys

from tiebreak_core import (
    TeamFormat,
    TeamMatch,
    TeamRecord,
    calculate_team_strict,
    rank_teams_strict,
)
from tiebreak_core.errors import InvalidDescriptorError, UnsupportedCriterionError


def main() -> None:
    data = json.load(sys.stdin)
    fmt = TeamFormat(
        mp_win=float(data["mp_win"]),
        mp_draw=float(data["mp_draw"]),
        max_gp_per_match=data.get("max_gp_per_match"),
    )
    rounds = int(data["rounds"])
    teams = {}
    for t in data["teams"]:
        matches = [
            TeamMatch(
                opponent_id=int(m["opponent"]),
                round_number=int(m["round"]),
                mp=float(m["mp"]),
                gp=float(m["gp"]),
                kind=m["kind"],
            )
            for m in t["matches"]
        ]
        teams[int(t["id"])] = TeamRecord(
            team_id=int(t["id"]),
            mp=float(t["mp"]),
            gp=float(t["gp"]),
            matches=matches,
            board_points=tuple(float(b) for b in t["board_points"]),
        )
    values = {str(tid): {} for tid in teams}
    refused = {}
    for code in data["codes"]:
        for tid, team in teams.items():
            try:
                v = calculate_team_strict(team, teams, code, rounds, fmt)
            except (InvalidDescriptorError, UnsupportedCriterionError) as e:
                refused[code] = str(e)
                v = None
            values[str(tid)][code] = v
    ranked = rank_teams_strict(teams, list(data["rank_by"]), rounds, fmt)
    json.dump(
        {
            "values": values,
            "order": [r.team_id for r in ranked.teams],
            "refused": refused,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
