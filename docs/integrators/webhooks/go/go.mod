module example.com/tranche-webhooks

go 1.22
