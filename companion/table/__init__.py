"""The table: the round's state machine (controller), the event log (store), config and wiring."""
