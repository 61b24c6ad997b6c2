// placeholder until the analyzer lands
