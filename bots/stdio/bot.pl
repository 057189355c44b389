#!/usr/bin/env perl
# A minimal Knobel bot in Perl (core modules only): `knobel play --exec perl bots/stdio/bot.pl`.
#
# Each stdin line is a message from the arena as JSON (docs/stdio-bots.md). Answer each
# decision_request with one line {"request_id": ..., "action": <one of its legal_actions>}.
# Print nothing else on stdout: stderr goes to the bridge's log.
use strict;
use warnings;
use JSON::PP;

$| = 1;    # one line out per decision, at once
my $json = JSON::PP->new->canonical;

# The first legal action that a want accepts, wants in order of preference; else the default.
sub pick {
    my ($request, @wants) = @_;
    for my $want (@wants) {
        for my $action (@{ $request->{legal_actions} }) {
            return $action if $want->($action);
        }
    }
    return $request->{default_action};
}

sub kind { my ($name) = @_; return sub { exists $_[0]{$name} } }

# Schocken and Sjokken: reroll every die that is not a one (turning no six), else stop.
sub shake {
    my ($request, $obs) = @_;
    my @dice = map { $_->{value} // 0 } @{ $obs->{turns}[ $obs->{seat} ]{dice} };
    my %locked = map { $_ => 1 } @{ $obs->{decision}{locked} };
    my @slots = grep { $dice[$_] != 1 && !$locked{$_} } 0 .. 2;
    my $wanted = join ',', @slots;
    my $reroll = sub {
        my $r = $_[0]{reroll} or return 0;
        return !@{ $r->{turn} } && join(',', sort @{ $r->{dice} }) eq $wanted;
    };
    return pick($request, (@slots >= 2 ? ($reroll) : ()), kind('stop'));
}

# Zokken: keep the dice, then check or call; never raise.
sub zokken {
    my ($request) = @_;
    my $keep = sub { my $r = $_[0]{reroll}; $r && !@{ $r->{dice} } };
    return pick($request, $keep, kind('check'), kind('call'));
}

while (my $line = <STDIN>) {
    my $message = $json->decode($line);
    if (my $request = $message->{decision_request}) {
        my $obs = $request->{observation};
        my $action = $obs->{shake} ? shake($request, $obs->{shake}) : zokken($request);
        print $json->encode({ request_id => $request->{request_id}, action => $action }), "\n";
    } elsif ($message->{error} || $message->{line_error}) {
        print STDERR "refused: $line";
    }
}
