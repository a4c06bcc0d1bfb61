"""Ways in and out for other programs: the Gomocup (piskvork) engine protocol (`pbrain`)."""
