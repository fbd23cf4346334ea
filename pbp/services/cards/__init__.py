"""Card games in forum threads (Sex & Violence, One Can Have Her): tables and their actions."""
