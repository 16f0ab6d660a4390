-- relay schema 6: the index of the black box by port goes. Nothing in the relay reads the
-- readings by port (`relay replay` reads one e-board's, by serial number), and each commit
-- carries readings from many ports: every reading wrote one more index page, at a place of
-- its own (with 1000 boards, about twenty pages a commit).
DROP INDEX IF EXISTS raw_log_port_time;
