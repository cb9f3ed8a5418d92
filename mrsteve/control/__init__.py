"""Control: visitation map and goal selectors, navigators, instruction policies."""
