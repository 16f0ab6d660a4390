-- relay schema 5: the index of moves by game and time goes. Nothing reads moves in that
-- order (games are read by ply, through the primary key), and every index is one more page
-- written with each move's commit.
DROP INDEX IF EXISTS moves_game_accepted;
