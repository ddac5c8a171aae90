
ï
bench_userlist.protobench"G
Address
city (	Rcity
street (	Rstreet
zip (	Rzip"¾
User
id (Rid
name (	Rname
email (	Remail
age (Rage
score (Rscore
active (Ractive
tags (	Rtags(
address (2.bench.AddressRaddress"W
UserPage
page (Rpage
total (Rtotal!
users (2.bench.UserRusers"e
UserListResponse
code (Rcode
message (	Rmessage#
data (2.bench.UserPageRdatabproto3