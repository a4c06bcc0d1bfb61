"""Ways in and out for other programs: the Gomocup (piskvork) engine protocol (`pbrain`) and
trained networks exported as serialized StableHLO (`export`)."""
