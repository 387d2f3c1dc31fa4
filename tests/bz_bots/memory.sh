#!/bin/sh
# A Botzone bot (simple interaction, one process per turn) in POSIX sh that keeps its memory in data and
# globaldata: data holds the number of turns it has answered in this game and must come back as the number of
# earlier turns (else it answers garbage, a WA); globaldata counts every turn it ever answered, over all its
# games. It plays the tile it draws and passes on everything else. Input: n, then 2n - 1 lines, data, globaldata.
read -r n
i=1
last=""
while [ "$i" -lt $((2 * n)) ]; do
  IFS= read -r last
  i=$((i + 1))
done
IFS= read -r data
gd=""
while IFS= read -r l || [ -n "$l" ]; do gd="$gd$l"; done
case $last in
  "2 "*) resp="PLAY ${last#2 }" ;;
  *) resp="PASS" ;;
esac
if [ "$n" -eq 1 ]; then want=""; else want=$((n - 1)); fi
[ "$data" = "$want" ] || resp="BAD DATA $data"
printf '%s\n%s\n%s\n%s\n' "$resp" "data=$data globaldata=$gd" "$n" "$((${gd:-0} + 1))"
