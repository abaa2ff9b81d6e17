"""Watch: new pools checked as they launch, watched tokens re-checked, events delivered."""
