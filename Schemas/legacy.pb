
–
legacy.protolegacy"è
Legacy
id (Rid
name (	:unnamedRname
count (:42Rcount
ratio (:2.5Rratio
enabled (:trueRenabled+
level (2.legacy.Level:MEDIUMRlevel!
magic (:\001\002abcRmagic&
big (:18446744073709551615Rbig
small	 (:-0.25Rsmall
plain
 (Rplain
packed (BRpacked"
next (2.legacy.LegacyRnext
delta (:-7Rdelta*&
Level
LOW

MEDIUM
HIGH
